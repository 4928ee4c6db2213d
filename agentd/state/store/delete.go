package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentnode/agentnode/agentd/state/schema"
)

// Purge hard-deletes a document: its row, its ops and its snapshot go, and
// one purge marker is logged so that replicas drop it too and ignore ops
// stamped before the purge. check sees the row first (exists reports
// whether there is one) and may refuse.
func (s *Store) Purge(ctx context.Context, sch *schema.Schema, id string, check func(m Meta, exists bool) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.prepare(ctx, sch); err != nil {
		return err
	}
	st, err := s.load(ctx, sch, id)
	if err != nil {
		return err
	}
	if err := check(st.meta, st.exists); err != nil {
		return err
	}
	m := st.meta
	e := Envelope{Schema: sch.URI, Doc: id, Scope: m.Scope, Owner: m.Owner, Agent: m.Agent,
		Action: ActionPurge, Op: s.marker(ActionPurge)}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := deleteDoc(ctx, tx, st.tables, sch.URI, id); err != nil {
			return err
		}
		_, err := insertOp(ctx, tx, st.tables, &e)
		return err
	})
	s.cache.drop(st.key)
	return err
}

// deleteDoc removes a document's row, ops and snapshot.
func deleteDoc(ctx context.Context, tx *sql.Tx, t tables, uri, id string) error {
	for _, table := range []string{t.docs, t.ops, t.snaps} {
		col := "doc_id"
		if table == t.docs {
			col = "id"
		}
		q := fmt.Sprintf(`DELETE FROM %s WHERE schema_uri = ? AND %s = ?`, table, col)
		if _, err := tx.ExecContext(ctx, q, uri, id); err != nil {
			return fmt.Errorf("store: delete from %s: %w", table, err)
		}
	}
	return nil
}
