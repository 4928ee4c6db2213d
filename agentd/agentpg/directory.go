package agentpg

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentnode/agentnode/agentd/directory"
)

// Registrations is directory.Registrations in the database: every
// instance's directory restores the same registrations and claims at Load.
type Registrations struct{ db *DB }

var _ directory.Registrations = (*Registrations)(nil)

// Registrations returns the directory registrations (give it to
// directory.Config.Registrations).
func (db *DB) Registrations() *Registrations { return &Registrations{db: db} }

// exec runs one change and announces it (TopicRegistrations), in one
// transaction.
func (r *Registrations) exec(ctx context.Context, sql string, args ...any) error {
	return pgx.BeginFunc(ctx, r.db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sql, args...); err != nil {
			return err
		}
		return notify(ctx, tx, TopicRegistrations)
	})
}

// SetRegistered records agent's proven (un)registration.
func (r *Registrations) SetRegistered(ctx context.Context, agent string, on bool) error {
	q := `DELETE FROM agentpg_dir_registered WHERE agent = $1`
	if on {
		q = `INSERT INTO agentpg_dir_registered (agent) VALUES ($1) ON CONFLICT DO NOTHING`
	}
	if err := r.exec(ctx, q, agent); err != nil {
		return fmt.Errorf("agentpg: directory registration: %w", err)
	}
	return nil
}

// PutClaim records c, replacing the claim with its key.
func (r *Registrations) PutClaim(ctx context.Context, c directory.StoredClaim) error {
	doc, err := json.Marshal(c.Claim)
	if err != nil {
		return fmt.Errorf("agentpg: encode claim: %w", err)
	}
	err = r.exec(ctx, `INSERT INTO agentpg_dir_claims (key, claim, status, at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (key) DO UPDATE SET claim = EXCLUDED.claim, status = EXCLUDED.status, at = EXCLUDED.at`,
		c.Key, string(doc), c.Status, c.At.UnixMilli())
	if err != nil {
		return fmt.Errorf("agentpg: put claim: %w", err)
	}
	return nil
}

// DeleteClaim forgets the claim with key.
func (r *Registrations) DeleteClaim(ctx context.Context, key string) error {
	if err := r.exec(ctx, `DELETE FROM agentpg_dir_claims WHERE key = $1`, key); err != nil {
		return fmt.Errorf("agentpg: delete claim: %w", err)
	}
	return nil
}

// Load returns the registered agents (sorted) and the claims (by key).
func (r *Registrations) Load(ctx context.Context) ([]string, []directory.StoredClaim, error) {
	rows, err := r.db.pool.Query(ctx, `SELECT agent FROM agentpg_dir_registered ORDER BY agent`)
	if err != nil {
		return nil, nil, fmt.Errorf("agentpg: load registrations: %w", err)
	}
	reg, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, nil, fmt.Errorf("agentpg: load registrations: %w", err)
	}
	rows, err = r.db.pool.Query(ctx, `SELECT key, claim, status, at FROM agentpg_dir_claims ORDER BY key`)
	if err != nil {
		return nil, nil, fmt.Errorf("agentpg: load claims: %w", err)
	}
	var claims []directory.StoredClaim
	var c directory.StoredClaim
	var doc string
	var at int64
	_, err = pgx.ForEachRow(rows, []any{&c.Key, &doc, &c.Status, &at}, func() error {
		c.Claim, c.At = directory.Claim{}, time.UnixMilli(at).UTC()
		claims = append(claims, c)
		return json.Unmarshal([]byte(doc), &claims[len(claims)-1].Claim)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("agentpg: load claims: %w", err)
	}
	return reg, claims, nil
}
