package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentnode/agentnode/agentd/state/schema"
)

// OpsSince returns up to limit envelopes of namespace prefix logged after
// local sequence after, in log order, with Seq set: the replication cursor.
// Expired ops are left out; ops folded into a snapshot are read from it.
func (s *Store) OpsSince(ctx context.Context, prefix string, after int64, limit int) ([]Envelope, error) {
	if !schema.ValidPrefix(prefix) {
		return nil, fmt.Errorf("store: invalid namespace %q", prefix)
	}
	t := tables{prefix + "_docs", prefix + "_ops", prefix + "_snaps"}
	rows, err := s.opRows(ctx, t, after, limit)
	if err != nil {
		return nil, err
	}
	snaps := map[string]map[string]Envelope{}
	out := make([]Envelope, 0, len(rows))
	for _, r := range rows {
		e, err := s.resolveBody(ctx, t, snaps, r)
		if err != nil {
			return nil, err
		}
		if e != nil {
			e.Seq = r.seq
			out = append(out, *e)
		}
	}
	return out, nil
}

// opRow is an op-log row as OpsSince reads it.
type opRow struct {
	seq          int64
	uri, doc, op string
	body         sql.NullString
}

func (s *Store) opRows(ctx context.Context, t tables, after int64, limit int) ([]opRow, error) {
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf(`SELECT seq, schema_uri, doc_id, op_id, body FROM %s
	  WHERE seq > ? AND gone = 0 ORDER BY seq LIMIT ?`, t.ops), after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: read ops: %w", err)
	}
	defer rows.Close()
	var out []opRow
	for rows.Next() {
		var r opRow
		if err := rows.Scan(&r.seq, &r.uri, &r.doc, &r.op, &r.body); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// resolveBody decodes a stored body, or finds the op in its document's
// snapshot (nil if it is in neither, e.g. compacted away meanwhile).
func (s *Store) resolveBody(ctx context.Context, t tables, snaps map[string]map[string]Envelope, r opRow) (*Envelope, error) {
	if r.body.Valid {
		var e Envelope
		if err := decodeEnvelope(r.body.String, &e); err != nil {
			return nil, err
		}
		return &e, nil
	}
	key := r.uri + "\x00" + r.doc
	byOp, ok := snaps[key]
	if !ok {
		snap, err := readSnapshot(ctx, s.db, t, r.uri, r.doc)
		if err != nil {
			return nil, err
		}
		byOp = map[string]Envelope{}
		if snap != nil {
			for _, e := range snap.envs {
				byOp[e.OpID()] = e
			}
		}
		snaps[key] = byOp
	}
	if e, ok := byOp[r.op]; ok {
		return &e, nil
	}
	return nil, nil
}

// ApplyRemote applies envelopes received from another replica. Each is
// applied at most once (by document and op id), so redelivery and replays
// are harmless; ops of one document are committed in one transaction.
// Envelopes that cannot be applied (unknown schema, malformed, refused by
// the CRDT, too far in the future) are skipped and reported in the joined
// error; the rest still apply. It returns how many envelopes were new.
func (s *Store) ApplyRemote(ctx context.Context, envs []Envelope) (int, error) {
	var errs []error
	applied := 0
	for _, g := range groupByDoc(envs) {
		sch, ok := s.cfg.Schemas.Lookup(g[0].Schema)
		if !ok {
			errs = append(errs, fmt.Errorf("%w: %s", ErrUnknownSchema, g[0].Schema))
			continue
		}
		n, err := s.applyGroup(ctx, sch, g)
		applied += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return applied, errors.Join(errs...)
}

// groupByDoc splits envelopes per document, in order of first appearance.
func groupByDoc(envs []Envelope) [][]Envelope {
	idx := map[string]int{}
	var out [][]Envelope
	for _, e := range envs {
		k := e.Schema + "\x00" + e.Doc
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], e)
	}
	return out
}

// applyGroup applies one document's envelopes in one transaction.
func (s *Store) applyGroup(ctx context.Context, sch *schema.Schema, envs []Envelope) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.prepare(ctx, sch); err != nil {
		return 0, err
	}
	st, err := s.load(ctx, sch, envs[0].Doc)
	if err != nil {
		return 0, err
	}
	r := &remoteApply{s: s, st: st, meta: st.meta}
	err = s.inTx(ctx, r.run(ctx, envs))
	if err != nil {
		s.cache.drop(st.key)
		return 0, err
	}
	if r.purgedNow {
		s.cache.drop(st.key)
	}
	st.meta, st.exists = r.meta, st.exists || r.rowNeeded
	return r.applied, errors.Join(r.skipped...)
}

// remoteApply is the state of one applyGroup.
type remoteApply struct {
	s         *Store
	st        *docState
	meta      Meta
	applied   int
	skipped   []error
	rowNeeded bool // the document row must be written
	purgedNow bool
}

func (r *remoteApply) run(ctx context.Context, envs []Envelope) func(*sql.Tx) error {
	return func(tx *sql.Tx) error {
		for i := range envs {
			if err := r.one(ctx, tx, &envs[i]); err != nil {
				return err
			}
		}
		if !r.rowNeeded {
			return nil
		}
		_, raw, err := Materialise(r.st.sch, r.st.root)
		if err != nil {
			return err
		}
		r.meta.Size = int64(len(raw))
		return upsertDoc(ctx, tx, r.st, r.meta, raw)
	}
}

// one applies a single envelope; a refused envelope is recorded in skipped,
// a database error aborts the transaction.
func (r *remoteApply) one(ctx context.Context, tx *sql.Tx, e *Envelope) error {
	if err := r.admit(e); err != nil {
		r.skipped = append(r.skipped, err)
		return nil
	}
	if e.Action == ActionPurge {
		return r.purge(ctx, tx, e)
	}
	if r.st.purged.Compare(e.Op.TS) >= 0 && !r.st.purged.IsZero() {
		return nil // stamped before a purge this replica has seen
	}
	known, err := hasOp(ctx, tx, r.st.tables, e)
	if err != nil || known {
		return err
	}
	if e.Action == ActionOp {
		if err := r.st.root.Apply(e.Op); err != nil {
			r.skipped = append(r.skipped, fmt.Errorf("%w: %s: %w", ErrInvalidEnvelope, e.OpID(), err))
			return nil
		}
	}
	if _, err := insertOp(ctx, tx, r.st.tables, e); err != nil {
		return err
	}
	r.note(e)
	return nil
}

// admit checks an envelope's shape and its timestamp's drift.
func (r *remoteApply) admit(e *Envelope) error {
	if err := e.check(); err != nil {
		return err
	}
	limit := r.s.cfg.Now().Add(r.s.cfg.MaxDrift).UnixMilli()
	if e.Op.TS.Wall > limit {
		return fmt.Errorf("%w: op %s is %s in the future", ErrInvalidEnvelope, e.OpID(),
			time.Duration(e.Op.TS.Wall-r.s.cfg.Now().UnixMilli())*time.Millisecond)
	}
	return nil
}

// note updates the row for an applied envelope.
func (r *remoteApply) note(e *Envelope) {
	r.s.clock.Update(e.Op.TS)
	if !r.st.exists && !r.rowNeeded {
		r.meta = Meta{Scope: e.Scope, Owner: e.Owner, Agent: e.Agent, Visibility: r.st.sch.Visibility}
	}
	r.meta.stamp(e.Op.TS.Wall)
	if e.Action == ActionTombstone {
		r.meta.Deleted = true
	}
	r.applied++
	r.rowNeeded = true
}

// purge drops the document and its ops if the purge is newer than any seen.
func (r *remoteApply) purge(ctx context.Context, tx *sql.Tx, e *Envelope) error {
	if r.st.purged.Compare(e.Op.TS) >= 0 {
		return nil
	}
	if err := deleteDoc(ctx, tx, r.st.tables, r.st.sch.URI, r.st.id); err != nil {
		return err
	}
	if _, err := insertOp(ctx, tx, r.st.tables, e); err != nil {
		return err
	}
	fresh := r.s.newState(r.st.sch, r.st.id)
	fresh.purged = e.Op.TS
	*r.st = *fresh
	r.meta, r.rowNeeded, r.purgedNow = Meta{}, false, true
	r.applied++
	return nil
}

func hasOp(ctx context.Context, tx *sql.Tx, t tables, e *Envelope) (bool, error) {
	var one int
	err := tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT 1 FROM %s WHERE schema_uri = ? AND doc_id = ? AND op_id = ?`, t.ops),
		e.Schema, e.Doc, e.OpID()).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: look up op: %w", err)
	}
	return true, nil
}
