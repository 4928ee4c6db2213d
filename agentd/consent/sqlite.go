package consent

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentnode/agentnode/agentd/internal/sqlitedb"
)

// sqliteBackend is Backend on a SQLite file.
type sqliteBackend struct{ db *sql.DB }

var _ Backend = (*sqliteBackend)(nil)

const ddl = `CREATE TABLE IF NOT EXISTS approvals (
	id      TEXT PRIMARY KEY,
	status  TEXT NOT NULL,
	created INTEGER NOT NULL, -- unix ms
	doc     TEXT NOT NULL     -- the Approval as JSON
);
CREATE TABLE IF NOT EXISTS revoked (
	agent  TEXT PRIMARY KEY,
	reason TEXT NOT NULL DEFAULT '',
	at     INTEGER NOT NULL   -- unix ms
);`

// OpenSQLite opens (creating if needed) the consent file at path: the
// Backend Open uses for Config.Path.
func OpenSQLite(ctx context.Context, path string) (Backend, error) {
	db, err := sqlitedb.Open(ctx, path, ddl)
	if err != nil {
		return nil, fmt.Errorf("consent: %w", err)
	}
	return &sqliteBackend{db: db}, nil
}

func (b *sqliteBackend) Close() error { return b.db.Close() }

func (b *sqliteBackend) Insert(ctx context.Context, a Approval) error {
	doc, _ := json.Marshal(a)
	if _, err := b.db.ExecContext(ctx, `INSERT INTO approvals(id, status, created, doc) VALUES(?,?,?,?)`, a.ID, a.Status, a.Created.UnixMilli(), doc); err != nil {
		return fmt.Errorf("consent: record approval: %w", err)
	}
	return nil
}

type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func getApproval(ctx context.Context, q querier, id string) (Approval, error) {
	var doc string
	err := q.QueryRowContext(ctx, `SELECT doc FROM approvals WHERE id=?`, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Approval{}, fmt.Errorf("consent: get %s: %w", id, err)
	}
	var a Approval
	if err := json.Unmarshal([]byte(doc), &a); err != nil {
		return Approval{}, fmt.Errorf("consent: decode %s: %w", id, err)
	}
	return a, nil
}

func (b *sqliteBackend) Get(ctx context.Context, id string) (Approval, error) {
	return getApproval(ctx, b.db, id)
}

func (b *sqliteBackend) List(ctx context.Context, status Status) ([]Approval, error) {
	rows, err := b.db.QueryContext(ctx, `SELECT doc FROM approvals WHERE ?='' OR status=? ORDER BY created, rowid`, status, status) // rowid: asking order within one millisecond (ids are random)
	if err != nil {
		return nil, fmt.Errorf("consent: list: %w", err)
	}
	defer rows.Close()
	out := []Approval{}
	for rows.Next() {
		var doc string
		var a Approval
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("consent: list: %w", err)
		}
		if err := json.Unmarshal([]byte(doc), &a); err != nil {
			return nil, fmt.Errorf("consent: decode: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func (b *sqliteBackend) Update(ctx context.Context, id string, change func(*Approval) error) (Approval, error) {
	tx, err := b.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return Approval{}, fmt.Errorf("consent: update %s: %w", id, err)
	}
	defer tx.Rollback()
	a, err := getApproval(ctx, tx, id)
	if err != nil {
		return Approval{}, err
	}
	if err := change(&a); err != nil {
		return a, err
	}
	doc, _ := json.Marshal(a)
	if _, err := tx.ExecContext(ctx, `UPDATE approvals SET status=?, doc=? WHERE id=?`, a.Status, doc, id); err != nil {
		return Approval{}, fmt.Errorf("consent: update %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return Approval{}, fmt.Errorf("consent: update %s: %w", id, err)
	}
	return a, nil
}

func (b *sqliteBackend) PutRevoked(ctx context.Context, r Revocation) error {
	if _, err := b.db.ExecContext(ctx, `INSERT INTO revoked(agent, reason, at) VALUES(?,?,?) ON CONFLICT(agent) DO UPDATE SET reason=excluded.reason, at=excluded.at`,
		r.Agent, r.Reason, r.At.UnixMilli()); err != nil {
		return fmt.Errorf("consent: revoke %s: %w", r.Agent, err)
	}
	return nil
}

func (b *sqliteBackend) DeleteRevoked(ctx context.Context, agent string) (bool, error) {
	res, err := b.db.ExecContext(ctx, `DELETE FROM revoked WHERE agent=?`, agent)
	if err != nil {
		return false, fmt.Errorf("consent: unrevoke %s: %w", agent, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

func (b *sqliteBackend) Revoked(ctx context.Context) ([]Revocation, error) {
	rows, err := b.db.QueryContext(ctx, `SELECT agent, reason, at FROM revoked ORDER BY at, agent`)
	if err != nil {
		return nil, fmt.Errorf("consent: revoked list: %w", err)
	}
	defer rows.Close()
	out := []Revocation{}
	for rows.Next() {
		var r Revocation
		var at int64
		if err := rows.Scan(&r.Agent, &r.Reason, &at); err != nil {
			return nil, fmt.Errorf("consent: revoked list: %w", err)
		}
		r.At = time.UnixMilli(at).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}
