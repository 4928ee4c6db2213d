package lmdbw

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/nbd-wtf/go-nostr"
)

var (
	// ErrLayout: the store is not the layout of eventstore/lmdb v0.17.2.
	ErrLayout = errors.New("lmdbw: unexpected store layout")
	// ErrCorrupt: a stored record does not decode.
	ErrCorrupt = errors.New("lmdbw: corrupt stored event")
	// ErrUnstorable: the event does not fit the layout's binary encoding
	// (content over 65,535 bytes, too many tags or items, ...).
	ErrUnstorable = errors.New("event does not fit the store's encoding")
)

// Action is what an Op asks for.
type Action int

const (
	// Save stores a regular event unless it is already stored or deleted.
	Save Action = iota
	// Replace stores a replaceable or addressable event and removes the
	// older versions of its address; an older event than the stored one
	// is ignored.
	Replace
	// Delete removes an event (by id) with its index entries.
	Delete
)

// Outcome is what an Op did.
type Outcome int

const (
	Stored    Outcome = iota + 1 // the event was written
	Duplicate                    // already stored: nothing written
	Ignored                      // a newer version of the address is stored
	Deleted                      // a stored NIP-09 deletion by its author covers it
	Removed                      // Delete: the event was removed (or was absent)
	Failed                       // Err says why; nothing of this op was written
)

// Op is one request in a batch. Commit fills Outcome, Err and Removed.
type Op struct {
	Action Action
	Event  *nostr.Event

	Outcome Outcome
	Err     error
	// Removed are the stored events this op removed: older versions for
	// Replace, the targets of a kind 5 Save, the event itself for Delete.
	Removed []*nostr.Event
}

// Writer owns the store's LMDB environment: it writes batches of ops
// (Commit) and reads the layout (Plan, Read). Commit may be called from
// several goroutines (LMDB serialises write transactions); the relay has
// one writer goroutine for group commit (relay/ingest.go) and deletes
// expired events it meets on its own.
type Writer struct {
	env        *lmdb.Env
	dbis       dbis
	lastSerial atomic.Uint32 // the highest serial given to a record
}

// dbis are the handles of the layout's named databases.
type dbis struct {
	raw, createdAt, id, kind, pubkey, pubkeyKind, tag, tag32, tagAddr, ptagKind lmdb.DBI
}

// Close closes the environment. No read or write transaction may be open
// (WaitReaders); the Writer is unusable afterwards.
func (w *Writer) Close() {
	w.env.Close()
}

// serial is a fresh 4-byte key of the raw database. A transaction that
// aborts leaves a gap, as eventstore's Serial does.
func (w *Writer) serial() []byte {
	return binary.BigEndian.AppendUint32(nil, w.lastSerial.Add(1))
}

// Commit applies ops in order in one write transaction and commits it
// (LMDB syncs the commit to disk before returning). Each op sees the
// effects of the ops before it. A per-event problem fails that op only;
// an error of the transaction itself is returned and then nothing of the
// batch was written (every op's Outcome is Failed); it wraps ErrDiskFull
// or ErrMapFull when that is the cause. The next Commit tries afresh.
func (w *Writer) Commit(ops []*Op) error {
	err := w.env.Update(func(txn *lmdb.Txn) error {
		for _, op := range ops {
			op.Outcome, op.Err, op.Removed = 0, nil, nil
			if err := w.apply(txn, op); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		err = fmt.Errorf("lmdbw: commit batch of %d: %w", len(ops), classify(err))
		for _, op := range ops {
			op.Outcome, op.Err, op.Removed = Failed, err, nil
		}
	}
	return err
}

// apply runs one op; a returned error aborts the whole transaction.
func (w *Writer) apply(txn *lmdb.Txn, op *Op) error {
	if op.Action != Delete {
		if err := encodable(op.Event); err != nil {
			op.Outcome, op.Err = Failed, fmt.Errorf("%w: %w", ErrUnstorable, err)
			return nil
		}
	}
	switch op.Action {
	case Save:
		return w.applySave(txn, op)
	case Replace:
		return w.applyReplace(txn, op)
	case Delete:
		return w.applyDelete(txn, op)
	}
	op.Outcome, op.Err = Failed, fmt.Errorf("lmdbw: unknown action %d", op.Action)
	return nil
}

func (w *Writer) applySave(txn *lmdb.Txn, op *Op) error {
	evt := op.Event
	if found, err := w.has(txn, evt.ID); err != nil || found {
		op.Outcome = Duplicate
		return err
	}
	if del, err := w.deletedBy(txn, evt); err != nil || del {
		op.Outcome = Deleted
		return err
	}
	if err := w.put(txn, evt); err != nil {
		return err
	}
	op.Outcome = Stored
	if evt.Kind == 5 {
		removed, err := w.applyDeletion(txn, evt)
		op.Removed = removed
		return err
	}
	return nil
}

func (w *Writer) applyReplace(txn *lmdb.Txn, op *Op) error {
	evt := op.Event
	if del, err := w.deletedBy(txn, evt); err != nil || del {
		op.Outcome = Deleted
		return err
	}
	versions, err := w.versions(txn, evt)
	if err != nil {
		return err
	}
	for _, prev := range versions {
		if !isOlder(prev, evt) {
			op.Outcome = Ignored
			if prev.ID == evt.ID {
				op.Outcome = Duplicate
			}
			return nil
		}
	}
	for _, prev := range versions {
		if err := w.remove(txn, prev.ID); err != nil {
			return err
		}
	}
	op.Removed = versions
	op.Outcome = Stored
	return w.put(txn, evt)
}

func (w *Writer) applyDelete(txn *lmdb.Txn, op *Op) error {
	op.Outcome = Removed
	if err := w.remove(txn, op.Event.ID); err != nil {
		return err
	}
	op.Removed = []*nostr.Event{op.Event}
	return nil
}

// isOlder is the layout's replacement order (eventstore internal.IsOlder):
// older created_at, or the same created_at and the greater id.
func isOlder(prev, next *nostr.Event) bool {
	return prev.CreatedAt < next.CreatedAt || (prev.CreatedAt == next.CreatedAt && prev.ID > next.ID)
}
