package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/schema"
)

// docState is a document in memory: its CRDT, rebuilt from the op log, and
// its row.
type docState struct {
	key    string
	sch    *schema.Schema
	id     string
	root   *crdt.ORMap
	meta   Meta
	exists bool           // a row exists (possibly tombstoned)
	purged crdt.Timestamp // the latest purge: ops stamped before it are dropped
	tables tables
}

// tables are one namespace's table names.
type tables struct{ docs, ops, snaps string }

func tablesOf(sch *schema.Schema) tables {
	d, o, s := sch.Namespace.Tables()
	return tables{d, o, s}
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func docKey(sch *schema.Schema, id string) string { return sch.URI + "\x00" + id }

// load returns the document's state from the cache or rebuilds it from the
// database. Callers hold s.mu.
func (s *Store) load(ctx context.Context, sch *schema.Schema, id string) (*docState, error) {
	if s.closed {
		return nil, ErrClosed
	}
	if st, ok := s.cache.get(docKey(sch, id)); ok {
		return st, nil
	}
	st, err := s.rebuild(ctx, s.db, sch, id)
	if err != nil {
		return nil, err
	}
	s.cache.put(st)
	return st, nil
}

// rebuild reads the row, the latest purge and the ops of a document and
// replays the ops into a fresh CRDT.
func (s *Store) rebuild(ctx context.Context, q querier, sch *schema.Schema, id string) (*docState, error) {
	st := s.newState(sch, id)
	if err := st.readRow(ctx, q); err != nil {
		return nil, err
	}
	if err := st.readPurge(ctx, q); err != nil {
		return nil, err
	}
	envs, err := loadEnvelopes(ctx, q, st.tables, sch.URI, id)
	if err != nil {
		return nil, err
	}
	if err := st.replay(envs); err != nil {
		return nil, err
	}
	return st, nil
}

func (s *Store) newState(sch *schema.Schema, id string) *docState {
	root, err := crdt.NewObject(sch.Fields)
	if err != nil { // fields were checked by schema.Parse
		panic(err)
	}
	root.Bind(s.clock)
	st := &docState{key: docKey(sch, id), sch: sch, id: id, root: root, tables: tablesOf(sch)}
	st.meta.Visibility = sch.Visibility
	return st
}

// replay applies logged ops to the CRDT.
func (st *docState) replay(envs []Envelope) error {
	for _, e := range envs {
		if e.Action != ActionOp {
			continue
		}
		if err := st.root.Apply(e.Op); err != nil {
			return fmt.Errorf("store: replay %s %s op %s: %w", st.sch.URI, st.id, e.OpID(), err)
		}
	}
	return nil
}

func (st *docState) readRow(ctx context.Context, q querier) error {
	row := q.QueryRowContext(ctx, fmt.Sprintf(`SELECT scope, owner, agent, visibility, created_at, updated_at, deleted, size
	  FROM %s WHERE schema_uri = ? AND id = ?`, st.tables.docs), st.sch.URI, st.id)
	m := &st.meta
	var size sql.NullInt64
	err := row.Scan(&m.Scope, &m.Owner, &m.Agent, &m.Visibility, &m.CreatedAt, &m.UpdatedAt, &m.Deleted, &size)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("store: read document: %w", err)
	}
	m.Size, st.exists = size.Int64, true
	return nil
}

func (st *docState) readPurge(ctx context.Context, q querier) error {
	var ts crdt.Timestamp
	var replica string
	err := q.QueryRowContext(ctx, fmt.Sprintf(`SELECT wall, logical, replica FROM %s
	  WHERE schema_uri = ? AND doc_id = ? AND action = ? ORDER BY wall DESC, logical DESC, replica DESC LIMIT 1`, st.tables.ops),
		st.sch.URI, st.id, ActionPurge).Scan(&ts.Wall, &ts.Logical, &replica)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("store: read purge: %w", err)
	}
	ts.Replica = crdt.ReplicaID(replica)
	st.purged = ts
	return nil
}

// loadEnvelopes returns a document's live ops (not expired), snapshot
// first, in log order.
func loadEnvelopes(ctx context.Context, q querier, t tables, uri, id string) ([]Envelope, error) {
	snap, err := readSnapshot(ctx, q, t, uri, id)
	if err != nil {
		return nil, err
	}
	var out []Envelope
	if snap != nil {
		out = snap.envs
	}
	rows, err := q.QueryContext(ctx, fmt.Sprintf(`SELECT seq, body FROM %s
	  WHERE schema_uri = ? AND doc_id = ? AND gone = 0 AND body IS NOT NULL ORDER BY seq`, t.ops), uri, id)
	if err != nil {
		return nil, fmt.Errorf("store: read ops: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEnvelope(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func scanEnvelope(rows *sql.Rows) (Envelope, error) {
	var seq int64
	var body string
	if err := rows.Scan(&seq, &body); err != nil {
		return Envelope{}, fmt.Errorf("store: read op: %w", err)
	}
	var e Envelope
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		return Envelope{}, fmt.Errorf("store: decode op %d: %w", seq, err)
	}
	e.Seq = seq
	return e, nil
}
