package dm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentnode/agentnode/agentd/internal/atomicfile"
	"github.com/nbd-wtf/go-nostr"
)

// ledger remembers which gift wraps were processed, so that neither the
// live hook and the catch-up together nor a restart answer one twice.
// Ids are kept for the catch-up window: an older wrap is never looked at.
//
// A reply goes through two durable steps: begin records the reply's gift
// wraps (signed, final ids) as pending before the first is published;
// Mark records the wrap as done once both are stored. A stop or a crash
// between the two leaves the reply pending, and the next Run publishes
// the same events again (the relay takes a duplicate silently) instead
// of asking for a new answer.
type ledger struct {
	path   string // "" = memory only
	window time.Duration

	saveMu sync.Mutex // serialises saves, so the last file written is the newest state
	mu     sync.Mutex // guards state; never held during file I/O (has runs in the relay's hook)
	state  ledgerFile
}

// ledgerFile is the JSON on disk.
type ledgerFile struct {
	// Watermark is the unix time of the last processed wrap.
	Watermark int64 `json:"watermark"`
	// Done maps processed wrap ids to their created_at.
	Done map[string]int64 `json:"done"`
	// Pending maps wrap ids whose reply may not be published yet to it.
	Pending map[string]PendingReply `json:"pending,omitempty"`
}

// PendingReply is a reply prepared for a wrap: its gift wraps in
// publishing order (to the sender, then the agent's own copy).
type PendingReply struct {
	At    int64          `json:"at"` // the answered wrap's created_at
	Wraps []*nostr.Event `json:"wraps"`
}

// openLedger reads path (a missing file is an empty ledger).
func openLedger(path string, window time.Duration) (*ledger, error) {
	l := &ledger{path: path, window: window, state: ledgerFile{Done: map[string]int64{}}}
	if path == "" {
		return l, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dm: read state: %w", err)
	}
	if err := json.Unmarshal(b, &l.state); err != nil {
		return nil, fmt.Errorf("dm: state %s is not valid JSON: %w", path, err)
	}
	if l.state.Done == nil {
		l.state.Done = map[string]int64{}
	}
	return l, nil
}

// Has reports whether wrap id was processed or has a pending reply.
func (l *ledger) Has(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, done := l.state.Done[id]
	_, pending := l.state.Pending[id]
	return done || pending
}

// Since is where a catch-up starts: a window before the watermark, or
// before now when nothing was ever processed.
func (l *ledger) Since(now time.Time) nostr.Timestamp {
	l.mu.Lock()
	defer l.mu.Unlock()
	from := now
	if l.state.Watermark > 0 {
		from = time.Unix(l.state.Watermark, 0)
	}
	return nostr.Timestamp(from.Add(-l.window).Unix())
}

// Pending returns the replies begun and not yet marked done.
func (l *ledger) Pending() map[string]PendingReply {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.state.Pending)
}

// Begin records reply as pending for wrap and saves the file; a wrap
// already marked done wraps ErrAnswered.
func (l *ledger) Begin(wrap *nostr.Event, reply []*nostr.Event) error {
	l.mu.Lock()
	_, done := l.state.Done[wrap.ID]
	l.mu.Unlock()
	if done {
		return fmt.Errorf("%w: %s", ErrAnswered, wrap.ID)
	}
	return l.update(func(st *ledgerFile) {
		if st.Pending == nil {
			st.Pending = map[string]PendingReply{}
		}
		st.Pending[wrap.ID] = PendingReply{At: int64(wrap.CreatedAt), Wraps: reply}
	})
}

// Mark records wrap id (created at) as processed at now, drops its
// pending reply, forgets ids older than the window and saves the file.
func (l *ledger) Mark(id string, at nostr.Timestamp, now time.Time) error {
	return l.update(func(st *ledgerFile) {
		delete(st.Pending, id)
		st.Done[id] = int64(at)
		st.Watermark = max(st.Watermark, now.Unix())
		cut := st.Watermark - int64(l.window/time.Second)
		for old, oldAt := range st.Done {
			if oldAt < cut {
				delete(st.Done, old)
			}
		}
	})
}

// update applies change to the state in memory and saves it.
func (l *ledger) update(change func(*ledgerFile)) error {
	l.saveMu.Lock()
	defer l.saveMu.Unlock()
	l.mu.Lock()
	change(&l.state)
	b, err := json.Marshal(l.state)
	l.mu.Unlock()
	if err != nil || l.path == "" {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("dm: save state: %w", err)
	}
	if err := atomicfile.Write(l.path, b, 0o600); err != nil {
		return fmt.Errorf("dm: save state: %w", err)
	}
	return nil
}
