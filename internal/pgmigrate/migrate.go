package pgmigrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrTooNew means the database was migrated by a newer binary.
var ErrTooNew = errors.New("pgmigrate: database schema is newer than this binary")

// Schema is one versioned schema. Steps[i] brings it to version i+1; a step
// that has shipped is never edited: append a new one.
type Schema struct {
	Name  string   // prefix of the version table, <Name>_schema
	Lock  int64    // advisory lock key held while migrating
	Steps []string // SQL, one or more statements each
}

// Version is the schema version this binary knows.
func (s Schema) Version() int { return len(s.Steps) }

// Migrate brings the database to s.Version() under s.Lock and refuses one
// whose recorded version is newer (an error wrapping ErrTooNew).
func (s Schema) Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgmigrate: %s: %w", s.Name, err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", s.Lock); err != nil {
		return fmt.Errorf("pgmigrate: %s: lock: %w", s.Name, err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", s.Lock)
	have, err := s.current(ctx, conn.Conn())
	if err != nil {
		return err
	}
	if have > s.Version() {
		return fmt.Errorf("%w: %s has version %d, this binary knows %d", ErrTooNew, s.Name, have, s.Version())
	}
	for v := have; v < s.Version(); v++ {
		if err := s.apply(ctx, conn.Conn(), v+1); err != nil {
			return err
		}
	}
	return nil
}

// current creates the version table if needed and returns the version.
func (s Schema) current(ctx context.Context, conn *pgx.Conn) (int, error) {
	table := pgx.Identifier{s.Name + "_schema"}.Sanitize()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (version integer NOT NULL)`); err != nil {
		return 0, fmt.Errorf("pgmigrate: %s: %w", s.Name, err)
	}
	var have int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+table).Scan(&have); err != nil {
		return 0, fmt.Errorf("pgmigrate: %s: %w", s.Name, err)
	}
	return have, nil
}

// apply runs step version and records it, in one transaction.
func (s Schema) apply(ctx context.Context, conn *pgx.Conn, version int) error {
	table := pgx.Identifier{s.Name + "_schema"}.Sanitize()
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.Steps[version-1]); err != nil {
			return fmt.Errorf("pgmigrate: %s: step %d: %w", s.Name, version, err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO `+table+` (version) VALUES ($1)`, version)
		return err
	})
}
