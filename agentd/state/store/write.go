package store

import (
	"context"
	"database/sql"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
	"unsafe"

	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/schema"
)

// Txn is one local change to one document, built by the function given to
// Write. It makes local CRDT edits through Root and records their ops; Write
// then materialises, checks and commits everything in one transaction, or
// nothing.
type Txn struct {
	st      *docState
	create  *Meta
	tomb    bool
	ops     []crdt.Op
	touched bool
	check   func(value map[string]any, raw []byte) error
}

// Exists reports whether the document has a row (it may be tombstoned).
func (t *Txn) Exists() bool { return t.st.exists }

// Meta returns the document's row (zero if it does not exist).
func (t *Txn) Meta() Meta { return t.st.meta }

// Value returns the document as it is before this change.
func (t *Txn) Value() (map[string]any, error) {
	v, _, err := Materialise(t.st.sch, t.st.root)
	return v, err
}

// Root returns the document's CRDT, bound to the store's clock. Edits made
// through it must be passed to Record.
func (t *Txn) Root() *crdt.ORMap {
	t.touched = true
	return t.st.root
}

// Record adds local ops made through Root.
func (t *Txn) Record(ops ...crdt.Op) { t.ops = append(t.ops, ops...) }

// Create marks the change as the document's creation with the given row
// (scope, owner, agent, visibility).
func (t *Txn) Create(m Meta) { t.create = &m }

// Tombstone marks the document deleted.
func (t *Txn) Tombstone() { t.tomb = true }

// Check sets a function that must accept the materialised result (schema
// validation, size limits) before anything is written.
func (t *Txn) Check(fn func(value map[string]any, raw []byte) error) { t.check = fn }

// Write runs fn on document (sch, id) under the store's write lock and
// commits what it recorded in one transaction. If fn or the commit fails,
// nothing is written and the in-memory CRDT is dropped (it is rebuilt from
// the log on next use).
func (s *Store) Write(ctx context.Context, sch *schema.Schema, id string, fn func(*Txn) error) (*Doc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.prepare(ctx, sch); err != nil {
		return nil, err
	}
	st, err := s.load(ctx, sch, id)
	if err != nil {
		return nil, err
	}
	t := &Txn{st: st}
	if err := fn(t); err != nil {
		if t.touched {
			s.cache.drop(st.key)
		}
		return nil, err
	}
	doc, err := s.commitLocal(ctx, t)
	if err != nil {
		s.cache.drop(st.key)
	}
	return doc, err
}

// commitLocal logs t's envelopes and writes the materialised document.
func (s *Store) commitLocal(ctx context.Context, t *Txn) (*Doc, error) {
	st := t.st
	meta := st.meta
	if t.create != nil {
		meta = *t.create
		meta.Visibility = st.sch.Visibility
	}
	envs := s.envelopes(t, meta)
	value, raw, err := Materialise(st.sch, st.root)
	if err != nil || len(envs) == 0 {
		return &Doc{Schema: st.sch.URI, ID: st.id, Meta: meta, Value: raw}, err
	}
	if t.check != nil && !t.tomb {
		if err := t.check(value, raw); err != nil {
			return nil, err
		}
	}
	for _, e := range envs {
		meta.stamp(e.Op.TS.Wall)
	}
	meta.Deleted = meta.Deleted || t.tomb
	meta.Size = int64(len(raw))
	value = nil
	if len(raw) >= largeWrite && freeGap.allow(time.Now()) {
		// What the materialisation and validation left behind (decoded
		// copies, the validator's copies of strings) is garbage now; the
		// SQL statements then hold several C-side copies of the document
		// (modernc's libc: the bound text, the record, the JSON parse
		// behind expression indexes). Collecting and returning the garbage
		// first keeps both from adding up in RSS (33 MiB memo through the
		// CLI: 349 MB max RSS without, 281 MB with; docs/ASM.md §12). At
		// most once per freeEvery: it runs under the store's lock, and a
		// caller putting large values in a loop must not hold every other
		// write in a collection.
		debug.FreeOSMemory()
	}
	if err := s.inTx(ctx, func(tx *sql.Tx) error { return s.persist(ctx, tx, st, envs, meta, raw) }); err != nil {
		return nil, err
	}
	st.meta, st.exists = meta, true
	return &Doc{Schema: st.sch.URI, ID: st.id, Meta: meta, Value: raw}, nil
}

// envelopes wraps t's markers and ops.
func (s *Store) envelopes(t *Txn, meta Meta) []Envelope {
	var out []Envelope
	wrap := func(action string, op crdt.Op) {
		out = append(out, Envelope{Schema: t.st.sch.URI, Doc: t.st.id, Scope: meta.Scope,
			Owner: meta.Owner, Agent: meta.Agent, Action: action, Op: op})
	}
	if t.create != nil {
		wrap(ActionCreate, s.marker(ActionCreate))
	}
	for _, op := range t.ops {
		wrap(ActionOp, op)
	}
	if t.tomb {
		wrap(ActionTombstone, s.marker(ActionTombstone))
	}
	return out
}

// marker returns a fresh op id and timestamp for a create, tombstone or
// purge marker (Kind is the action; it is never applied to a CRDT).
func (s *Store) marker(action string) crdt.Op {
	r := crdt.NewLWWRegister()
	r.Bind(s.clock)
	op, _ := r.Set(true)
	return crdt.Op{ID: op.ID, TS: op.TS, Kind: action}
}

// largeWrite is the document size from which a write returns freed heap
// memory to the OS before its SQL statements.
const largeWrite = 8 << 20

// testHookBeforeCommit, when set by a test, runs after a write's rows are
// inserted and before the commit; an error rolls everything back.
var testHookBeforeCommit func() error

// persist upserts the document row and inserts the envelopes. The row goes
// first: its statement is the costlier in memory for a large document
// (SQLite's copy of the text, the record, and the JSON parse behind the
// expression indexes), and the ops' encoded bodies do not exist yet then.
func (s *Store) persist(ctx context.Context, tx *sql.Tx, st *docState, envs []Envelope, meta Meta, raw []byte) error {
	if err := upsertDoc(ctx, tx, st, meta, raw); err != nil {
		return err
	}
	for i := range envs {
		if _, err := insertOp(ctx, tx, st.tables, &envs[i]); err != nil {
			return err
		}
	}
	if testHookBeforeCommit != nil {
		return testHookBeforeCommit()
	}
	return nil
}

// insertOp logs an envelope unless the document already has its op id; it
// reports whether a row was added and sets e.Seq.
func insertOp(ctx context.Context, tx *sql.Tx, t tables, e *Envelope) (bool, error) {
	body, err := e.body()
	if err != nil {
		return false, fmt.Errorf("store: encode op: %w", err)
	}
	id := e.Op.ID
	res, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s
	  (scope, schema_uri, doc_id, op_id, replica, counter, ctr_end, wall, logical, action, body)
	  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, t.ops),
		e.Scope, e.Schema, e.Doc, e.OpID(), string(id.Replica), int64(id.Counter), int64(id.Counter+width(&e.Op)-1),
		e.Op.TS.Wall, int64(e.Op.TS.Logical), e.Action, textArg(body))
	if err != nil {
		return false, fmt.Errorf("store: log op: %w", err)
	}
	n, _ := res.RowsAffected()
	if n == 1 {
		e.Seq, _ = res.LastInsertId()
	}
	return n == 1, nil
}

func upsertDoc(ctx context.Context, tx *sql.Tx, st *docState, m Meta, raw []byte) error {
	_, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s
	  (schema_uri, id, doc, scope, owner, agent, visibility, created_at, updated_at, deleted, size)
	  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	  ON CONFLICT (schema_uri, id) DO UPDATE SET doc = excluded.doc, created_at = excluded.created_at,
	    updated_at = excluded.updated_at, deleted = excluded.deleted, size = excluded.size`, st.tables.docs),
		st.sch.URI, st.id, textArg(raw), m.Scope, m.Owner, m.Agent, m.Visibility, m.CreatedAt, m.UpdatedAt, m.Deleted, m.Size)
	if err != nil {
		return fmt.Errorf("store: write document: %w", err)
	}
	return nil
}

// inTx runs fn in a write transaction and commits it, or rolls back.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	s.changes.signal()
	return nil
}

// textArg passes JSON bytes as a TEXT argument without copying them (the
// driver copies them into SQLite; a large document would otherwise be
// copied twice). b must not change until the statement returns; a BLOB
// argument would not do: SQLite's JSON functions read a BLOB as JSONB.
func textArg(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// freeEvery is the least time between two collections forced by large
// writes (Write).
const freeEvery = 5 * time.Second

// freeGap spaces the collections forced by large writes.
var freeGap = &gcGap{}

// gcGap lets one thing happen at most once per freeEvery.
type gcGap struct {
	mu   sync.Mutex
	last time.Time
}

func (g *gcGap) allow(now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Sub(g.last) < freeEvery {
		return false
	}
	g.last = now
	return true
}
