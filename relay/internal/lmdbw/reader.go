package lmdbw

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/nbd-wtf/go-nostr"
)

// The read side of the layout: a filter is answered by walking one index
// (several prefixes of it, merged newest first) inside one read
// transaction on the caller's goroutine, handing each candidate's raw
// record to the caller, which stops the walk as soon as it has its answer.
// eventstore's QueryEvents instead gathers its whole limit,
// decoding every candidate, on a goroutine of its own, and hands the events
// over an unbuffered channel one by one.

// Plan is how a filter is read: index scans merged newest first, or (for
// ids) point lookups. Every candidate is a superset of the matches: the
// caller checks each one with filter.Matches.
type Plan struct {
	scans []scan
	ids   [][]byte // 8-byte id prefixes, looked up instead of scanned
	Index string   // the index's name, for tests and logs
}

// scan is one index prefix whose keys are prefix + created_at (4 bytes).
type scan struct {
	dbi    lmdb.DBI
	prefix []byte
}

// Plan picks the index for f. Tags with 32-byte hex values (e, E, p, q...)
// are the narrowest; then authors (with kinds); then other indexable tags;
// then kinds; else created_at. f's values must be de-duplicated.
func (w *Writer) Plan(f nostr.Filter) Plan {
	d := &w.dbis
	if len(f.IDs) > 0 {
		p := Plan{Index: "id"}
		for _, id := range f.IDs {
			p.ids = append(p.ids, hex8(id))
		}
		return p
	}
	name, values, hex32 := narrowestTag(f)
	switch {
	case name != "" && hex32:
		return w.tagPlan(f, name, values)
	case len(f.Authors) > 0 && len(f.Kinds) > 0:
		p := Plan{Index: "pubkeyKind"}
		for _, a := range f.Authors {
			for _, k := range f.Kinds {
				p.scans = append(p.scans, scan{d.pubkeyKind, binary.BigEndian.AppendUint16(hex8(a), uint16(k))})
			}
		}
		return p
	case len(f.Authors) > 0:
		p := Plan{Index: "pubkey"}
		for _, a := range f.Authors {
			p.scans = append(p.scans, scan{d.pubkey, hex8(a)})
		}
		return p
	case name != "":
		return w.tagPlan(f, name, values)
	case len(f.Kinds) > 0:
		p := Plan{Index: "kind"}
		for _, k := range f.Kinds {
			p.scans = append(p.scans, scan{d.kind, binary.BigEndian.AppendUint16(nil, uint16(k))})
		}
		return p
	}
	return Plan{Index: "created_at", scans: []scan{{d.createdAt, nil}}}
}

// tagPlan scans the tag's values; "p" with few kinds uses the p-tag+kind
// index (one prefix per value and kind).
func (w *Writer) tagPlan(f nostr.Filter, name string, values []string) Plan {
	if name == "p" && len(f.Kinds) > 0 && len(f.Kinds)*len(values) <= 64 {
		p := Plan{Index: "ptagKind"}
		for _, v := range values {
			for _, k := range f.Kinds {
				p.scans = append(p.scans, scan{w.dbis.ptagKind, binary.BigEndian.AppendUint16(hex8(v), uint16(k))})
			}
		}
		return p
	}
	p := Plan{Index: "tag"}
	for _, v := range values {
		dbi, prefix := w.tagPrefix(name, v)
		p.scans = append(p.scans, scan{dbi, prefix})
	}
	return p
}

// narrowestTag picks the filter tag to scan: one whose every value the
// layout indexes (a one-letter name, values of 1 to 100 bytes), preferring
// 32-byte hex values, then fewer values. hex32 reports the former.
func narrowestTag(f nostr.Filter) (name string, values []string, hex32 bool) {
	best := -1
	for k, vs := range f.Tags {
		if len(k) != 1 || len(vs) == 0 || !allIndexable(vs) {
			continue
		}
		h := allHex32(vs)
		score := 1000 - len(vs)
		if h {
			score += 1000
		}
		if score > best || (score == best && k < name) {
			best, name, values, hex32 = score, k, vs, h
		}
	}
	return name, values, hex32
}

func allIndexable(vs []string) bool {
	for _, v := range vs {
		if len(v) == 0 || len(v) > 100 {
			return false
		}
	}
	return true
}

func allHex32(vs []string) bool {
	for _, v := range vs {
		if len(v) != 64 {
			return false
		}
		if _, err := hex.DecodeString(v[:16]); err != nil {
			return false
		}
	}
	return true
}

// Visit receives one candidate: its created_at and raw record (valid only
// during the call). It returns false to end the read.
type Visit func(createdAt uint32, raw []byte) bool

// Read walks p inside one read transaction, newest first (by created_at;
// id lookups in no particular order), from until down to since (both
// inclusive), calling visit with each candidate once.
func (w *Writer) Read(ctx context.Context, p Plan, since, until uint32, visit Visit) error {
	return w.env.View(func(txn *lmdb.Txn) error {
		txn.RawRead = true
		if p.ids != nil {
			return w.lookupIDs(txn, p.ids, since, until, visit)
		}
		return w.merge(ctx, txn, p.scans, since, until, visit)
	})
}

// lookupIDs visits the records whose id index entry matches each prefix.
func (w *Writer) lookupIDs(txn *lmdb.Txn, ids [][]byte, since, until uint32, visit Visit) error {
	cur, err := txn.OpenCursor(w.dbis.id)
	if err != nil {
		return err
	}
	defer cur.Close()
	for _, id := range ids {
		k, idx, err := cur.Get(id, nil, lmdb.SetRange)
		for ; err == nil && bytes.Equal(k, id); k, idx, err = cur.Get(nil, nil, lmdb.Next) {
			raw, rerr := txn.Get(w.dbis.raw, idx)
			if lmdb.IsNotFound(rerr) {
				continue
			}
			if rerr != nil {
				return rerr
			}
			if len(raw) < 136 {
				return ErrCorrupt
			}
			ts := binary.BigEndian.Uint32(raw[128:132])
			if ts >= since && ts <= until && !visit(ts, raw) {
				return nil
			}
		}
		if err != nil && !lmdb.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// cursor is one scan's position: its current key's created_at and serial.
type cursor struct {
	c      *lmdb.Cursor
	prefix []byte
	ts     uint32
	idx    []byte
	done   bool
}

// step moves c to the previous key (or, first, to the newest key at or
// below until) and reads its created_at; done when it leaves the prefix
// or falls below since.
func (c *cursor) step(first bool, since, until uint32) error {
	var k, v []byte
	var err error
	if first {
		// just past every key (and duplicate) of prefix+until, then back one
		seek := append(binary.BigEndian.AppendUint32(clone(c.prefix), until), 0)
		_, _, err = c.c.Get(seek, nil, lmdb.SetRange)
		if lmdb.IsNotFound(err) {
			k, v, err = c.c.Get(nil, nil, lmdb.Last)
		} else if err == nil {
			k, v, err = c.c.Get(nil, nil, lmdb.Prev)
		}
	} else {
		k, v, err = c.c.Get(nil, nil, lmdb.Prev)
	}
	if lmdb.IsNotFound(err) {
		c.done = true
		return nil
	}
	if err != nil {
		return err
	}
	if len(k) != len(c.prefix)+4 || !bytes.HasPrefix(k, c.prefix) {
		c.done = true
		return nil
	}
	c.ts, c.idx = binary.BigEndian.Uint32(k[len(k)-4:]), v
	if c.ts < since {
		c.done = true
	}
	return nil
}

// merge walks every scan newest first, visiting each record once.
func (w *Writer) merge(ctx context.Context, txn *lmdb.Txn, scans []scan, since, until uint32, visit Visit) error {
	curs := make([]cursor, len(scans))
	for i, s := range scans {
		c, err := txn.OpenCursor(s.dbi)
		if err != nil {
			return err
		}
		defer c.Close()
		curs[i] = cursor{c: c, prefix: s.prefix}
		if err := curs[i].step(true, since, until); err != nil {
			return err
		}
	}
	// A record met under two prefixes (an event with two of the filter's
	// tag values) is met at its own created_at both times: the records
	// seen are kept for the current second only.
	var seen map[string]struct{}
	var seenAt uint32
	if len(scans) > 1 {
		seen = map[string]struct{}{}
	}
	for n := 0; ; n++ {
		if n%1024 == 1023 && ctx.Err() != nil {
			return ctx.Err()
		}
		c := newest(curs)
		if c == nil {
			return nil
		}
		ts, idx := c.ts, c.idx
		if seen != nil && ts != seenAt {
			clear(seen)
			seenAt = ts
		}
		if seen != nil {
			if _, dup := seen[string(idx)]; dup {
				if err := c.step(false, since, until); err != nil {
					return err
				}
				continue
			}
			seen[string(idx)] = struct{}{}
		}
		raw, err := txn.Get(w.dbis.raw, idx)
		if err != nil && !lmdb.IsNotFound(err) {
			return err
		}
		if err == nil && !visit(ts, raw) {
			return nil
		}
		if err := c.step(false, since, until); err != nil {
			return err
		}
	}
}

// newest is the live cursor at the newest created_at (the first of equals).
func newest(curs []cursor) *cursor {
	var best *cursor
	for i := range curs {
		if c := &curs[i]; !c.done && (best == nil || c.ts > best.ts) {
			best = c
		}
	}
	return best
}

// Decode decodes a raw record (as handed to a Visit).
func Decode(raw []byte) (*nostr.Event, error) { return unmarshal(raw) }
