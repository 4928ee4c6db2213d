package peers

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
)

// loadMarks reads the peer's saved watermarks; on failure it starts from
// none (fetching everything again is safe, only slower).
func (p *peer) loadMarks(ctx context.Context) {
	m, err := p.s.cfg.Watermarks.Load(ctx, p.id)
	if err != nil {
		p.log.Warn("cannot load watermarks, starting over", "err", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.marks = m.Clone()
	if p.marks.Pull == nil {
		p.marks.Pull = map[string]nostr.Timestamp{}
	}
	if p.marks.Push == nil {
		p.marks.Push = map[string]nostr.Timestamp{}
	}
}

// save writes the watermarks if they changed since the last save.
func (p *peer) save(ctx context.Context) {
	p.mu.Lock()
	if !p.dirty {
		p.mu.Unlock()
		return
	}
	m := p.marks.Clone()
	p.dirty = false
	p.mu.Unlock()
	if err := p.s.cfg.Watermarks.Save(ctx, p.id, m); err != nil {
		p.log.Warn("cannot save watermarks", "err", err)
		p.mu.Lock()
		p.dirty = true
		p.mu.Unlock()
	}
}

// side picks the pull or the push watermarks.
type side int

const (
	pullSide side = iota
	pushSide
)

// table returns the watermarks of one side; p.mu must be held.
func (p *peer) table(sd side) map[string]nostr.Timestamp {
	if sd == pushSide {
		return p.marks.Push
	}
	return p.marks.Pull
}

// since is where a catch-up for key starts: its watermark minus the
// overlap, or 0 (the beginning) when there is none.
func (p *peer) since(sd side, key string) nostr.Timestamp {
	p.mu.Lock()
	wm := p.table(sd)[key]
	p.mu.Unlock()
	overlap := nostr.Timestamp(p.s.cfg.Overlap.Seconds() + 0.999)
	if wm <= overlap {
		return 0
	}
	return wm - overlap
}

// raise moves marks[key] up to ts, never past now.
func (p *peer) raise(sd side, key string, ts nostr.Timestamp) {
	ts = min(ts, nostr.Now())
	p.mu.Lock()
	defer p.mu.Unlock()
	marks := p.table(sd)
	if ts > marks[key] {
		marks[key] = ts
		p.dirty = true
	}
}

// lower moves marks[key] down to ts (an event at ts must be sent again).
func (p *peer) lower(sd side, key string, ts nostr.Timestamp) {
	p.mu.Lock()
	defer p.mu.Unlock()
	marks := p.table(sd)
	if cur, ok := marks[key]; ok && ts < cur {
		marks[key] = ts
		p.dirty = true
	}
}

// retain drops the marks of filters no longer in use.
func (p *peer) retain(sd side, in []keyed) {
	p.mu.Lock()
	defer p.mu.Unlock()
	marks := p.table(sd)
	for key := range marks {
		if !hasKey(in, key) {
			delete(marks, key)
			p.dirty = true
		}
	}
}

func hasKey(ks []keyed, key string) bool {
	for _, k := range ks {
		if k.key == key {
			return true
		}
	}
	return false
}
