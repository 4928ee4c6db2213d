package agentpg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentnode/agentnode/agentd/consent"
)

// Consent is consent.Backend in the database: one set of approvals and
// revocations for every instance; Update locks the approval's row.
type Consent struct{ db *DB }

var _ consent.Backend = (*Consent)(nil)

// Consent returns the consent backend (give it to consent.Config.Backend,
// with Poll and Refresh set: see consent.Config).
func (db *DB) Consent() *Consent { return &Consent{db: db} }

// Close is a no-op: the DB owns the connections.
func (b *Consent) Close() error { return nil }

// Insert records a new approval.
func (b *Consent) Insert(ctx context.Context, a consent.Approval) error {
	doc, _ := json.Marshal(a)
	_, err := b.db.pool.Exec(ctx, `INSERT INTO agentpg_approvals (id, status, created, doc) VALUES ($1, $2, $3, $4)`,
		a.ID, string(a.Status), a.Created.UnixMilli(), string(doc))
	if err != nil {
		return fmt.Errorf("consent: record approval: %w", err)
	}
	return nil
}

func getApproval(ctx context.Context, q querier, id, lock string) (consent.Approval, error) {
	var doc string
	err := q.QueryRow(ctx, `SELECT doc FROM agentpg_approvals WHERE id = $1`+lock, id).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return consent.Approval{}, fmt.Errorf("%w: %s", consent.ErrNotFound, id)
	}
	if err != nil {
		return consent.Approval{}, fmt.Errorf("consent: get %s: %w", id, err)
	}
	var a consent.Approval
	if err := json.Unmarshal([]byte(doc), &a); err != nil {
		return consent.Approval{}, fmt.Errorf("consent: decode %s: %w", id, err)
	}
	return a, nil
}

// Get returns approval id.
func (b *Consent) Get(ctx context.Context, id string) (consent.Approval, error) {
	return getApproval(ctx, b.db.pool, id, "")
}

// List returns the approvals with status ("" all), oldest first.
func (b *Consent) List(ctx context.Context, status consent.Status) ([]consent.Approval, error) {
	rows, err := b.db.pool.Query(ctx, `SELECT doc FROM agentpg_approvals WHERE $1 = '' OR status = $1 ORDER BY created, seq`, string(status))
	if err != nil {
		return nil, fmt.Errorf("consent: list: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (consent.Approval, error) {
		var doc string
		var a consent.Approval
		if err := r.Scan(&doc); err != nil {
			return a, err
		}
		return a, json.Unmarshal([]byte(doc), &a)
	})
	if err != nil {
		return nil, fmt.Errorf("consent: list: %w", err)
	}
	return out, nil
}

// Update edits approval id under its row lock.
func (b *Consent) Update(ctx context.Context, id string, change func(*consent.Approval) error) (consent.Approval, error) {
	var out consent.Approval
	err := pgx.BeginFunc(ctx, b.db.pool, func(tx pgx.Tx) error {
		a, err := getApproval(ctx, tx, id, " FOR UPDATE")
		if err != nil {
			return err
		}
		out = a
		if err := change(&a); err != nil {
			return err
		}
		doc, _ := json.Marshal(a)
		if _, err := tx.Exec(ctx, `UPDATE agentpg_approvals SET status = $1, doc = $2 WHERE id = $3`, string(a.Status), string(doc), id); err != nil {
			return err
		}
		out = a
		return notify(ctx, tx, TopicConsent)
	})
	return out, err
}

// PutRevoked records r, replacing the agent's earlier revocation.
func (b *Consent) PutRevoked(ctx context.Context, r consent.Revocation) error {
	err := pgx.BeginFunc(ctx, b.db.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO agentpg_revoked (agent, reason, at) VALUES ($1, $2, $3)
			ON CONFLICT (agent) DO UPDATE SET reason = EXCLUDED.reason, at = EXCLUDED.at`, r.Agent, r.Reason, r.At.UnixMilli())
		if err != nil {
			return err
		}
		return notify(ctx, tx, TopicRevoked)
	})
	if err != nil {
		return fmt.Errorf("consent: revoke %s: %w", r.Agent, err)
	}
	return nil
}

// DeleteRevoked lifts agent's revocation.
func (b *Consent) DeleteRevoked(ctx context.Context, agent string) (bool, error) {
	var was bool
	err := pgx.BeginFunc(ctx, b.db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM agentpg_revoked WHERE agent = $1`, agent)
		if err != nil {
			return err
		}
		was = tag.RowsAffected() > 0
		return notify(ctx, tx, TopicRevoked)
	})
	if err != nil {
		return false, fmt.Errorf("consent: unrevoke %s: %w", agent, err)
	}
	return was, nil
}

// Revoked returns the revocations, oldest first.
func (b *Consent) Revoked(ctx context.Context) ([]consent.Revocation, error) {
	rows, err := b.db.pool.Query(ctx, `SELECT agent, reason, at FROM agentpg_revoked ORDER BY at, agent`)
	if err != nil {
		return nil, fmt.Errorf("consent: revoked list: %w", err)
	}
	out := []consent.Revocation{}
	var r consent.Revocation
	var at int64
	_, err = pgx.ForEachRow(rows, []any{&r.Agent, &r.Reason, &at}, func() error {
		r.At = time.UnixMilli(at).UTC()
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("consent: revoked list: %w", err)
	}
	return out, nil
}
