package agentpg

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentnode/agentnode/agentd/lease"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// OpLog is the ASM op log in the database: every envelope an instance
// logged for an agent, appended under the agent's lease (lease.Fence), in
// append order per agent. It is the source of truth; an instance's SQLite
// store is a cache it replays from here when it takes an agent over (see
// StateSync). Envelopes are unique per (schema, document, op id), so an
// append is idempotent.
type OpLog struct{ db *DB }

// OpLog returns the op log.
func (db *DB) OpLog() *OpLog { return &OpLog{db: db} }

// Append stores envs in one transaction. With fence, the transaction holds
// the agent's lease row (lease.Fence) and fails wrapping lease.ErrLost if
// the lease is no longer fence's; every envelope must then be of that
// agent. Without fence (documents of no agent) nothing is checked.
func (o *OpLog) Append(ctx context.Context, fence *lease.Lease, envs []store.Envelope) error {
	return pgx.BeginFunc(ctx, o.db.pool, func(tx pgx.Tx) error { return appendTx(ctx, tx, fence, envs) })
}

// appendTx is Append inside tx.
func appendTx(ctx context.Context, tx pgx.Tx, fence *lease.Lease, envs []store.Envelope) error {
	if fence != nil {
		if err := lease.Fence(ctx, tx, *fence); err != nil {
			return err
		}
	}
	cols := make([][]string, 5)
	for _, e := range envs {
		if fence != nil && e.Agent != fence.Agent {
			return fmt.Errorf("agentpg: append: an op of %q under the lease of %q", e.Agent, fence.Agent)
		}
		e.Seq = 0
		body, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("agentpg: encode op: %w", err)
		}
		for i, v := range []string{e.Agent, e.Schema, e.Doc, e.OpID(), string(body)} {
			cols[i] = append(cols[i], v)
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO agentpg_asm_ops (agent, schema_uri, doc_id, op_id, body)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
		ON CONFLICT DO NOTHING`, cols[0], cols[1], cols[2], cols[3], cols[4])
	if err != nil {
		return fmt.Errorf("agentpg: append ops: %w", err)
	}
	return nil
}

// Replay returns up to limit of agent's envelopes appended after position
// after, in append order, and the position of the last one (after when
// none): call again with it until no envelopes come back.
func (o *OpLog) Replay(ctx context.Context, agent string, after int64, limit int) ([]store.Envelope, int64, error) {
	rows, err := o.db.pool.Query(ctx, `SELECT id, body FROM agentpg_asm_ops WHERE agent = $1 AND id > $2 ORDER BY id LIMIT $3`, agent, after, limit)
	if err != nil {
		return nil, after, fmt.Errorf("agentpg: replay ops: %w", err)
	}
	var out []store.Envelope
	var id int64
	var body string
	_, err = pgx.ForEachRow(rows, []any{&id, &body}, func() error {
		var e store.Envelope
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			return fmt.Errorf("op %d: %w", id, err)
		}
		out, after = append(out, e), id
		return nil
	})
	if err != nil {
		return nil, after, fmt.Errorf("agentpg: replay ops: %w", err)
	}
	return out, after, nil
}

// SaveSchema records a registered ASM schema, so that an instance
// replaying ops of it can register it first.
func (o *OpLog) SaveSchema(ctx context.Context, uri, capability string, raw []byte) error {
	_, err := o.db.pool.Exec(ctx, `INSERT INTO agentpg_asm_schemas (uri, capability, raw) VALUES ($1, $2, $3)
		ON CONFLICT (uri) DO UPDATE SET capability = EXCLUDED.capability, raw = EXCLUDED.raw`, uri, capability, string(raw))
	if err != nil {
		return fmt.Errorf("agentpg: save schema: %w", err)
	}
	return nil
}

// Schemas returns every recorded schema.
func (o *OpLog) Schemas(ctx context.Context) ([]store.SchemaRow, error) {
	rows, err := o.db.pool.Query(ctx, `SELECT uri, capability, raw FROM agentpg_asm_schemas ORDER BY uri`)
	if err != nil {
		return nil, fmt.Errorf("agentpg: schemas: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.SchemaRow, error) {
		var s store.SchemaRow
		var raw string
		err := r.Scan(&s.URI, &s.Capability, &raw)
		s.Raw = []byte(raw)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("agentpg: schemas: %w", err)
	}
	return out, nil
}
