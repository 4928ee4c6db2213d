package lease

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentnode/agentnode/internal/pgmigrate"
)

// schema is the lease tables' migrations: append only.
var schema = pgmigrate.Schema{
	Name: "agent_lease",
	Lock: 0x61676e64_6c656173, // "agnd" "leas"
	Steps: []string{
		// 1: one row per agent to run; epochs from one sequence, so they
		// only grow, even across a remove and a re-add.
		`CREATE SEQUENCE agent_lease_epoch;
		CREATE TABLE agent_leases (
			agent       text PRIMARY KEY,
			holder      text NOT NULL DEFAULT '',
			epoch       bigint NOT NULL DEFAULT 0,
			acquired_at timestamptz NOT NULL DEFAULT now(),
			expires_at  timestamptz NOT NULL DEFAULT '-infinity'
		);
		CREATE INDEX agent_leases_holder ON agent_leases (holder);
		CREATE INDEX agent_leases_expires ON agent_leases (expires_at);`,
		// 2: where the holder can be reached (for forwarding requests), and
		// the live instances (for balancing).
		`ALTER TABLE agent_leases ADD COLUMN holder_url text NOT NULL DEFAULT '';
		CREATE TABLE agent_instances (
			instance   text PRIMARY KEY,
			url        text NOT NULL DEFAULT '',
			expires_at timestamptz NOT NULL
		);`,
	},
}

// SchemaVersion is the lease schema version this binary knows.
var SchemaVersion = schema.Version()

// migrate brings the lease tables to SchemaVersion.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	err := schema.Migrate(ctx, pool)
	if errors.Is(err, pgmigrate.ErrTooNew) {
		return fmt.Errorf("%w: %w", ErrSchemaTooNew, err)
	}
	return err
}
