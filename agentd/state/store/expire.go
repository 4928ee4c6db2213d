package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentnode/agentnode/agentd/state/schema"
)

// Expire removes ops from a document's history: every CRDT op for which
// drop returns true. Their rows stay, marked gone with no body, so a
// redelivered copy is still recognised and ignored; the snapshot is
// rewritten without them and the document is rebuilt and rematerialised
// from what remains, all in one transaction. This is how log entries age
// out (x-ttl, x-retention on logs): log_rga has no delete op, and every
// replica expires the same ops because the decision rests on the ops' own
// timestamps. It returns how many ops were dropped.
func (s *Store) Expire(ctx context.Context, sch *schema.Schema, id string, drop func(Envelope) bool) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.prepare(ctx, sch); err != nil {
		return 0, err
	}
	t, n := tablesOf(sch), 0
	var st *docState
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		envs, err := loadEnvelopes(ctx, tx, t, sch.URI, id)
		if err != nil {
			return err
		}
		keep, gone := splitExpired(envs, drop)
		if n = len(gone); n == 0 {
			return nil
		}
		if err := markGone(ctx, tx, t, sch.URI, id, gone); err != nil {
			return err
		}
		if err := rewriteSnapshot(ctx, tx, t, sch, id, keep, s.cfg.Now().UnixMilli()); err != nil {
			return err
		}
		st, err = s.rematerialise(ctx, tx, sch, id, keep)
		return err
	})
	switch {
	case err != nil:
		s.cache.drop(docKey(sch, id))
	case st != nil:
		s.cache.put(st) // replaces any cached state of the document
	}
	return n, err
}

func splitExpired(envs []Envelope, drop func(Envelope) bool) (keep, gone []Envelope) {
	for _, e := range envs {
		if e.Action == ActionOp && drop(e) {
			gone = append(gone, e)
		} else {
			keep = append(keep, e)
		}
	}
	return keep, gone
}

func markGone(ctx context.Context, tx *sql.Tx, t tables, uri, id string, gone []Envelope) error {
	q := fmt.Sprintf(`UPDATE %s SET gone = 1, body = NULL WHERE schema_uri = ? AND doc_id = ? AND op_id = ?`, t.ops)
	for _, e := range gone {
		if _, err := tx.ExecContext(ctx, q, uri, id, e.OpID()); err != nil {
			return fmt.Errorf("store: expire op: %w", err)
		}
	}
	return nil
}

// rewriteSnapshot keeps the snapshot's remaining ops, if it has one.
func rewriteSnapshot(ctx context.Context, tx *sql.Tx, t tables, sch *schema.Schema, id string, keep []Envelope, now int64) error {
	snap, err := readSnapshot(ctx, tx, t, sch.URI, id)
	if err != nil || snap == nil {
		return err
	}
	var in []Envelope
	for _, e := range keep {
		if e.Seq <= snap.upto {
			in = append(in, e)
		}
	}
	_, err = writeSnapshot(ctx, tx, t, sch.URI, id, snap.codec, in, now)
	return err
}

// rematerialise rebuilds a document from envs and rewrites its content.
func (s *Store) rematerialise(ctx context.Context, tx *sql.Tx, sch *schema.Schema, id string, envs []Envelope) (*docState, error) {
	st := s.newState(sch, id)
	if err := st.readRow(ctx, tx); err != nil {
		return nil, err
	}
	if err := st.readPurge(ctx, tx); err != nil {
		return nil, err
	}
	if err := st.replay(envs); err != nil {
		return nil, err
	}
	_, raw, err := Materialise(sch, st.root)
	if err != nil || !st.exists {
		return st, err
	}
	st.meta.Size = int64(len(raw))
	_, err = tx.ExecContext(ctx, fmt.Sprintf(`UPDATE %s SET doc = ?, size = ? WHERE schema_uri = ? AND id = ?`, st.tables.docs),
		string(raw), st.meta.Size, sch.URI, id)
	return st, err
}
