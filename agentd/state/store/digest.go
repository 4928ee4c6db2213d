package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/schema"
)

// DocDigest summarises what a replica holds of one document: its live
// ops (not expired), counted and hashed. Two replicas holding the same set
// of live op ids for a document have equal digests, whatever order the ops
// arrived in; anti-entropy compares them.
type DocDigest struct {
	Schema, Doc  string
	Scope        string
	Owner, Agent string // from the row, or from an op's envelope when there is no row (purged)
	Ops          int
	Hash         [32]byte // sha256 over the sorted live op ids
}

// Digests returns the digest of every document of namespace prefix that
// has ops, ordered by schema and document id.
func (s *Store) Digests(ctx context.Context, prefix string) ([]DocDigest, error) {
	if !schema.ValidPrefix(prefix) {
		return nil, fmt.Errorf("store: invalid namespace %q", prefix)
	}
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf(`SELECT o.schema_uri, o.doc_id, o.op_id, o.scope,
	    COALESCE(d.owner, json_extract(o.body, '$.owner'), ''), COALESCE(d.agent, json_extract(o.body, '$.agent'), '')
	  FROM %[1]s_ops o LEFT JOIN %[1]s_docs d ON d.schema_uri = o.schema_uri AND d.id = o.doc_id
	  WHERE o.gone = 0 ORDER BY o.schema_uri, o.doc_id, o.op_id`, prefix))
	if isNoTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: digests: %w", err)
	}
	defer rows.Close()
	return scanDigests(rows)
}

// scanDigests folds op rows, grouped by document, into digests.
func scanDigests(rows *sql.Rows) ([]DocDigest, error) {
	var out []DocDigest
	var cur *DocDigest
	h := sha256.New()
	flush := func() {
		if cur != nil {
			copy(cur.Hash[:], h.Sum(nil))
			out = append(out, *cur)
		}
	}
	for rows.Next() {
		var uri, doc, op, scope, owner, agent string
		if err := rows.Scan(&uri, &doc, &op, &scope, &owner, &agent); err != nil {
			return nil, fmt.Errorf("store: digests: %w", err)
		}
		if cur == nil || cur.Schema != uri || cur.Doc != doc {
			flush()
			cur = &DocDigest{Schema: uri, Doc: doc, Scope: scope}
			h.Reset()
		}
		if cur.Owner == "" {
			cur.Owner, cur.Agent = owner, agent
		}
		cur.Ops++
		h.Write([]byte(op))
		h.Write([]byte{0})
	}
	flush()
	return out, rows.Err()
}

// DocOps returns every live envelope of one document — create marker,
// CRDT ops, tombstone, purge — snapshot included, in log order: what a
// replica that lacks the document needs to reach its full state.
func (s *Store) DocOps(ctx context.Context, sch *schema.Schema, id string) ([]Envelope, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.prepare(ctx, sch); err != nil {
		return nil, err
	}
	envs, err := loadEnvelopes(ctx, s.db, tablesOf(sch), sch.URI, id)
	for i := range envs {
		envs[i].Seq = 0
	}
	return envs, err
}

// Inspection is what a replica knows about a document beyond its
// materialised value.
type Inspection struct {
	// Missing is "" when nothing is known missing; otherwise a short
	// reason this replica knows it lacks part of the causal history (no
	// create marker received, ops buffered for dependencies that never
	// arrived): the document shown is partial.
	Missing string
	// Concurrent lists, per mv_register field holding several concurrent
	// values, all of them (ordered by timestamp; the last is the one the
	// materialised document shows).
	Concurrent map[string][]json.RawMessage
}

// Inspect reports what is known missing of a document and the concurrent
// values of its multi-value registers.
func (s *Store) Inspect(ctx context.Context, sch *schema.Schema, id string) (Inspection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.load(ctx, sch, id)
	if err != nil {
		return Inspection{}, err
	}
	out := Inspection{Concurrent: concurrent(st.root)}
	var one int
	err = s.db.QueryRowContext(ctx, fmt.Sprintf(`SELECT 1 FROM %s WHERE schema_uri = ? AND doc_id = ? AND action = ? LIMIT 1`,
		st.tables.ops), sch.URI, id, ActionCreate).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows) && st.purged.IsZero():
		out.Missing = "the document's create marker has not been received: earlier ops are missing"
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return out, fmt.Errorf("store: inspect: %w", err)
	case pending(st.root) > 0:
		out.Missing = fmt.Sprintf("%d ops wait for ops this replica has not received", pending(st.root))
	}
	return out, nil
}

// concurrent returns the top-level mv_register fields with several values.
func concurrent(m *crdt.ORMap) map[string][]json.RawMessage {
	var out map[string][]json.RawMessage
	for _, k := range m.Keys() {
		c, _ := m.Get(k)
		mv, ok := c.(*crdt.MVRegister)
		if !ok {
			continue
		}
		if vals, _ := mv.Value().([]json.RawMessage); len(vals) > 1 {
			if out == nil {
				out = map[string][]json.RawMessage{}
			}
			out[k] = vals
		}
	}
	return out
}

// pending counts the ops buffered anywhere in a document's CRDT for a
// dependency that has not arrived (rga inserts and deletes).
func pending(m *crdt.ORMap) int {
	n := 0
	for _, k := range m.Keys() {
		switch c, _ := m.Get(k); v := c.(type) {
		case *crdt.ORMap:
			n += pending(v)
		case interface{ Pending() int }:
			n += v.Pending()
		}
	}
	return n
}
