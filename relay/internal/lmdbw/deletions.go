package lmdbw

import (
	"encoding/binary"
	"fmt"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/nbd-wtf/go-nostr"
)

// deletedBy reports whether a stored NIP-09 deletion by evt's author
// covers evt: one naming its id ("e"), or, for a replaceable or
// addressable event, one naming its address ("a") at or after its
// created_at (the rule of policies.RejectDeleted, here inside the
// transaction, so that it also holds within a batch).
func (w *Writer) deletedBy(txn *lmdb.Txn, evt *nostr.Event) (bool, error) {
	if evt.Kind == 5 {
		return false, nil
	}
	found := false
	dbi, prefix := w.tagPrefix("e", evt.ID)
	err := w.scan(txn, dbi, prefix, nil, func(del *nostr.Event) bool {
		found = del.Kind == 5 && del.PubKey == evt.PubKey && hasTag(del, "e", evt.ID)
		return !found
	})
	if err != nil || found || !(nostr.IsReplaceableKind(evt.Kind) || nostr.IsAddressableKind(evt.Kind)) {
		return found, err
	}
	addr := fmt.Sprintf("%d:%s:%s", evt.Kind, evt.PubKey, evt.Tags.GetD())
	prefix = binary.BigEndian.AppendUint16(hex8(evt.PubKey), 5)
	since := binary.BigEndian.AppendUint32(nil, uint32(evt.CreatedAt))
	err = w.scan(txn, w.dbis.pubkeyKind, prefix, since, func(del *nostr.Event) bool {
		found = del.Kind == 5 && del.PubKey == evt.PubKey && del.CreatedAt >= evt.CreatedAt && hasTag(del, "a", addr)
		return !found
	})
	return found, err
}

// applyDeletion removes what the just-stored deletion del covers among
// the events stored so far, this batch's included: "e" targets and "a"
// address versions up to del's created_at, by del's author only (khatru
// refuses a deletion naming a foreign stored event before it gets here).
func (w *Writer) applyDeletion(txn *lmdb.Txn, del *nostr.Event) ([]*nostr.Event, error) {
	var removed []*nostr.Event
	for _, tag := range del.Tags {
		targets, err := w.deletionTargets(txn, del, tag)
		if err != nil {
			return removed, err
		}
		for _, t := range targets {
			if t.PubKey != del.PubKey || t.ID == del.ID {
				continue
			}
			if err := w.remove(txn, t.ID); err != nil {
				return removed, err
			}
			removed = append(removed, t)
		}
	}
	return removed, nil
}

// deletionTargets are the stored events one tag of a deletion names.
func (w *Writer) deletionTargets(txn *lmdb.Txn, del *nostr.Event, tag nostr.Tag) ([]*nostr.Event, error) {
	if len(tag) < 2 {
		return nil, nil
	}
	switch tag[0] {
	case "e":
		if len(tag[1]) != 64 {
			return nil, nil
		}
		evt, _, err := w.get(txn, tag[1])
		if evt == nil {
			return nil, err
		}
		return []*nostr.Event{evt}, err
	case "a":
		ptr, err := nostr.EntityPointerFromTag(tag)
		if err != nil || ptr.PublicKey != del.PubKey {
			return nil, nil
		}
		probe := &nostr.Event{Kind: ptr.Kind, PubKey: ptr.PublicKey, Tags: nostr.Tags{{"d", ptr.Identifier}}}
		all, err := w.versions(txn, probe)
		var out []*nostr.Event
		for _, v := range all {
			if v.CreatedAt <= del.CreatedAt {
				out = append(out, v)
			}
		}
		return out, err
	}
	return nil, nil
}

// hasTag reports whether evt carries [name, value, ...].
func hasTag(evt *nostr.Event, name, value string) bool {
	for _, t := range evt.Tags {
		if len(t) >= 2 && t[0] == name && t[1] == value {
			return true
		}
	}
	return false
}
