package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/agentnode/agentnode/agentd/state/schema"
)

// Filter is an extra SQL predicate over a documents table's columns, with
// its arguments (the runtime's visibility rule). The zero Filter matches
// everything.
type Filter struct {
	SQL  string
	Args []any
}

// Get returns a document's row and content, if it exists and matches f.
// Tombstoned documents are returned with Deleted set.
func (s *Store) Get(ctx context.Context, sch *schema.Schema, id string, f Filter) (*Doc, error) {
	t := tablesOf(sch)
	q := fmt.Sprintf(`SELECT doc, scope, owner, agent, visibility, created_at, updated_at, deleted, size
	  FROM %s WHERE schema_uri = ? AND id = ?`, t.docs)
	args := []any{sch.URI, id}
	if f.SQL != "" {
		q += " AND (" + f.SQL + ")"
		args = append(args, f.Args...)
	}
	d := &Doc{Schema: sch.URI, ID: id}
	var raw string
	var size sql.NullInt64
	m := &d.Meta
	err := s.db.QueryRowContext(ctx, q, args...).Scan(&raw, &m.Scope, &m.Owner, &m.Agent, &m.Visibility,
		&m.CreatedAt, &m.UpdatedAt, &m.Deleted, &size)
	switch {
	case errors.Is(err, sql.ErrNoRows) || isNoTable(err):
		return nil, ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("store: get: %w", err)
	}
	d.Value, m.Size = []byte(raw), size.Int64
	return d, nil
}

// History returns a document's logged envelopes (create, ops, tombstone)
// in log order, snapshot included; expired ops are gone.
func (s *Store) History(ctx context.Context, sch *schema.Schema, id string) ([]Envelope, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.prepare(ctx, sch); err != nil {
		return nil, err
	}
	return loadEnvelopes(ctx, s.db, tablesOf(sch), sch.URI, id)
}

// DocInfo is a document's id and row, as listed for the lifecycle.
type DocInfo struct {
	ID string
	Meta
}

// List returns every document of a schema (tombstoned included), by id.
func (s *Store) List(ctx context.Context, sch *schema.Schema) ([]DocInfo, error) {
	t := tablesOf(sch)
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf(`SELECT id, scope, owner, agent, visibility, created_at, updated_at, deleted
	  FROM %s WHERE schema_uri = ? ORDER BY id`, t.docs), sch.URI)
	if isNoTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	defer rows.Close()
	var out []DocInfo
	for rows.Next() {
		var d DocInfo
		if err := rows.Scan(&d.ID, &d.Scope, &d.Owner, &d.Agent, &d.Visibility, &d.CreatedAt, &d.UpdatedAt, &d.Deleted); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// isNoTable reports a query on a namespace whose tables were never made.
func isNoTable(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "no such table")
}
