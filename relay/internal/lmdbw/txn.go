package lmdbw

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/nbd-wtf/go-nostr"
)

// has reports whether an event with id's 8-byte prefix is stored (the
// layout's duplicate rule: the id index keys 8 bytes).
func (w *Writer) has(txn *lmdb.Txn, id string) (bool, error) {
	_, err := txn.Get(w.dbis.id, hex8(id))
	if lmdb.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// get reads the stored event with id and its serial, or nil.
func (w *Writer) get(txn *lmdb.Txn, id string) (*nostr.Event, []byte, error) {
	idx, err := txn.Get(w.dbis.id, hex8(id))
	if lmdb.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	evt, err := w.read(txn, idx)
	if err != nil || evt == nil || evt.ID != id {
		return nil, nil, err
	}
	return evt, idx, nil
}

// read decodes the raw record at serial idx (nil if absent).
func (w *Writer) read(txn *lmdb.Txn, idx []byte) (*nostr.Event, error) {
	raw, err := txn.Get(w.dbis.raw, idx)
	if lmdb.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return unmarshal(raw)
}

// put writes evt's record under a fresh serial and every index entry.
func (w *Writer) put(txn *lmdb.Txn, evt *nostr.Event) error {
	idx := w.serial()
	if err := txn.Put(w.dbis.raw, idx, marshal(evt), 0); err != nil {
		return fmt.Errorf("put %s: %w", evt.ID, err)
	}
	for _, k := range w.indexKeys(evt) {
		if err := txn.Put(k.dbi, k.key, idx, 0); err != nil {
			return fmt.Errorf("index %s: %w", evt.ID, err)
		}
	}
	return nil
}

// remove deletes the stored event with id and its index entries (absent:
// nothing to do).
func (w *Writer) remove(txn *lmdb.Txn, id string) error {
	evt, idx, err := w.get(txn, id)
	if err != nil || evt == nil {
		return err
	}
	for _, k := range w.indexKeys(evt) {
		if err := txn.Del(k.dbi, k.key, idx); err != nil && !lmdb.IsNotFound(err) {
			return fmt.Errorf("unindex %s: %w", id, err)
		}
	}
	if err := txn.Del(w.dbis.raw, idx, nil); err != nil && !lmdb.IsNotFound(err) {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	return nil
}

// scan calls fn with each stored event whose key in dbi starts with
// prefix, from prefix+from on, in key order, until fn returns false.
func (w *Writer) scan(txn *lmdb.Txn, dbi lmdb.DBI, prefix, from []byte, fn func(*nostr.Event) bool) error {
	cur, err := txn.OpenCursor(dbi)
	if err != nil {
		return err
	}
	defer cur.Close()
	seek := append(clone(prefix), from...)
	k, idx, err := cur.Get(seek, nil, lmdb.SetRange)
	for ; err == nil && bytes.HasPrefix(k, prefix); k, idx, err = cur.Get(nil, nil, lmdb.Next) {
		evt, rerr := w.read(txn, idx)
		if rerr != nil {
			return rerr
		}
		if evt != nil && !fn(evt) {
			return nil
		}
	}
	if err != nil && !lmdb.IsNotFound(err) {
		return err
	}
	return nil
}

// versions are the stored events of evt's replaceable or addressable
// address (same kind, author and, when addressable, d tag).
func (w *Writer) versions(txn *lmdb.Txn, evt *nostr.Event) ([]*nostr.Event, error) {
	dbi, prefix := w.dbis.pubkeyKind, binary.BigEndian.AppendUint16(hex8(evt.PubKey), uint16(evt.Kind))
	addressable := nostr.IsAddressableKind(evt.Kind)
	d := evt.Tags.GetD()
	if addressable && indexableTag(nostr.Tag{"d", d}) {
		dbi, prefix = w.tagPrefix("d", d)
	}
	var out []*nostr.Event
	err := w.scan(txn, dbi, prefix, nil, func(prev *nostr.Event) bool {
		same := prev.Kind == evt.Kind && prev.PubKey == evt.PubKey && (!addressable || prev.Tags.GetD() == d)
		if same && !containsID(out, prev.ID) {
			out = append(out, prev)
		}
		return true
	})
	return out, err
}

func containsID(evts []*nostr.Event, id string) bool {
	for _, e := range evts {
		if e.ID == id {
			return true
		}
	}
	return false
}
