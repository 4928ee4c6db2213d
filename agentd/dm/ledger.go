package dm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"sync"
	"time"

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
//
// On disk (ledgerFiles) each step is one record appended to a log and
// fsynced; the log is folded into a snapshot once it holds more records
// than the snapshot has ids, so a step costs the same whatever the size
// of the ledger (it used to rewrite the whole file).
type ledger struct {
	window time.Duration
	files  *ledgerFiles // nil: memory only

	saveMu sync.Mutex // serialises appends and compactions, so the log's order is the state's
	mu     sync.Mutex // guards st; never held during file I/O (Has runs in the relay's hook)
	st     ledgerState
}

// wrapKey is a wrap id in 32 bytes (a hash for an id that is not 64 hex).
type wrapKey [32]byte

func keyOf(id string) wrapKey {
	var k wrapKey
	if len(id) == 64 {
		if _, err := hex.Decode(k[:], []byte(id)); err == nil {
			return k
		}
	}
	return sha256.Sum256([]byte(id))
}

// ledgerState is the ledger in memory.
type ledgerState struct {
	watermark int64             // the unix time of the last processed wrap
	done      map[wrapKey]int64 // processed wrap -> its created_at
	pending   map[string]PendingReply
}

func newLedgerState() ledgerState {
	return ledgerState{done: map[wrapKey]int64{}, pending: map[string]PendingReply{}}
}

// PendingReply is a reply prepared for a wrap: its gift wraps in
// publishing order (to the sender, then the agent's own copy).
type PendingReply struct {
	At    int64          `json:"at"` // the answered wrap's created_at
	Wraps []*nostr.Event `json:"wraps"`
}

// openLedger reads the snapshot at path and its log (missing: an empty
// ledger); "" keeps the ledger in memory only.
func openLedger(path string, window time.Duration) (*ledger, error) {
	l := &ledger{window: window, st: newLedgerState()}
	if path == "" {
		return l, nil
	}
	files, err := openLedgerFiles(path, window, &l.st)
	if err != nil {
		return nil, err
	}
	l.files = files
	return l, nil
}

// close closes the log (a ledger Run opened itself).
func (l *ledger) close() error {
	if l.files == nil {
		return nil
	}
	l.saveMu.Lock()
	defer l.saveMu.Unlock()
	return l.files.close()
}

// Has reports whether wrap id was processed or has a pending reply.
func (l *ledger) Has(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, done := l.st.done[keyOf(id)]
	_, pending := l.st.pending[id]
	return done || pending
}

// Since is where a catch-up starts: a window before the watermark, or
// before now when nothing was ever processed.
func (l *ledger) Since(now time.Time) nostr.Timestamp {
	l.mu.Lock()
	defer l.mu.Unlock()
	from := now
	if l.st.watermark > 0 {
		from = time.Unix(l.st.watermark, 0)
	}
	return nostr.Timestamp(from.Add(-l.window).Unix())
}

// Pending returns the replies begun and not yet marked done.
func (l *ledger) Pending() map[string]PendingReply {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.st.pending)
}

// Begin records reply as pending for wrap, durably; a wrap already marked
// done wraps ErrAnswered.
func (l *ledger) Begin(_ context.Context, wrap *nostr.Event, reply []*nostr.Event) error {
	l.mu.Lock()
	_, done := l.st.done[keyOf(wrap.ID)]
	l.mu.Unlock()
	if done {
		return fmt.Errorf("%w: %s", ErrAnswered, wrap.ID)
	}
	return l.record(ledgerRecord{Op: opBegin, ID: wrap.ID, At: int64(wrap.CreatedAt), Wraps: reply})
}

// Mark records wrap id (created at) as processed at now and drops its
// pending reply, durably. Ids older than the window are forgotten when
// the log is folded into the snapshot.
func (l *ledger) Mark(_ context.Context, id string, at nostr.Timestamp, now time.Time) error {
	return l.record(ledgerRecord{Op: opDone, ID: id, At: int64(at), Now: now.Unix()})
}

// record appends rec to the log (when there is one) and applies it.
func (l *ledger) record(rec ledgerRecord) error {
	l.saveMu.Lock()
	defer l.saveMu.Unlock()
	var err error
	if l.files != nil {
		err = l.files.append(rec)
	}
	l.mu.Lock()
	l.st.apply(rec)
	l.mu.Unlock()
	if err != nil {
		return fmt.Errorf("dm: save state: %w", err)
	}
	if l.files != nil && l.files.due(l.size()) {
		if err := l.compact(); err != nil {
			return fmt.Errorf("dm: save state: %w", err)
		}
	}
	return nil
}

// size is how many ids the ledger holds.
func (l *ledger) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.st.done) + len(l.st.pending)
}

// compact forgets ids older than the window and folds the log into the
// snapshot. The caller holds saveMu.
func (l *ledger) compact() error {
	l.mu.Lock()
	l.st.forget(l.window)
	snap := l.st.file()
	l.mu.Unlock()
	return l.files.compact(snap)
}

// apply changes the state by one record.
func (st *ledgerState) apply(rec ledgerRecord) {
	switch rec.Op {
	case opBegin:
		st.pending[rec.ID] = PendingReply{At: rec.At, Wraps: rec.Wraps}
	case opDone:
		delete(st.pending, rec.ID)
		st.done[keyOf(rec.ID)] = rec.At
		st.watermark = max(st.watermark, rec.Now)
	}
}

// forget drops the processed ids older than the window before the watermark.
func (st *ledgerState) forget(window time.Duration) {
	cut := st.watermark - int64(window/time.Second)
	for k, at := range st.done {
		if at < cut {
			delete(st.done, k)
		}
	}
}
