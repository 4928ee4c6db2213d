package agentpg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentnode/agentnode/internal/pgmigrate"
)

// ErrSchemaTooNew: the database was migrated by a newer binary.
var ErrSchemaTooNew = errors.New("agentpg: database schema is newer than this binary")

// opTimeout bounds one call of the small stores (keys, the DM ledger)
// under the caller's ctx, so that a caller with no deadline of its own (a
// key lookup from a relay policy) does not wait on a hung database for
// ever.
const opTimeout = 30 * time.Second

// bounded is ctx with opTimeout at most: cancelling ctx still cancels the
// query.
func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, opTimeout)
}

// DB is the agent daemon's data in one PostgreSQL database. It is safe for
// concurrent use, also by several instances on the same database.
type DB struct {
	pool    *pgxpool.Pool
	ownPool bool
}

// Open connects to url and migrates the schema.
func Open(ctx context.Context, url string) (*DB, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("agentpg: open: %w", err)
	}
	db, err := New(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	db.ownPool = true
	return db, nil
}

// New migrates the schema in pool's database and returns a DB on pool
// (which Close leaves open).
func New(ctx context.Context, pool *pgxpool.Pool) (*DB, error) {
	err := migrations.Migrate(ctx, pool)
	if errors.Is(err, pgmigrate.ErrTooNew) {
		return nil, fmt.Errorf("%w: %w", ErrSchemaTooNew, err)
	}
	if err != nil {
		return nil, err
	}
	return &DB{pool: pool}, nil
}

// Close closes the connections Open made.
func (db *DB) Close() {
	if db.ownPool {
		db.pool.Close()
	}
}

// SchemaVersion is the schema version this binary knows.
var SchemaVersion = migrations.Version()

// migrations is agentpg's migrations: append only, never edit a shipped step.
var migrations = pgmigrate.Schema{
	Name: "agentpg",
	Lock: 0x61676e64_61677067, // "agnd" "agpg"
	Steps: []string{
		// 1: keys and installed agents.
		`CREATE TABLE agentpg_keys (
			pubkey     text PRIMARY KEY,
			secret     text NOT NULL, -- hex, or a NIP-49 ncryptsec
			created_at timestamptz NOT NULL DEFAULT now()
		);
		CREATE TABLE agentpg_agents (
			pubkey text PRIMARY KEY,
			seq    bigint GENERATED ALWAYS AS IDENTITY, -- install order
			doc    jsonb NOT NULL                       -- agentd.Agent
		);`,
		// 2: the DM answered-once ledger (dm.Ledger).
		`CREATE TABLE agentpg_dm_wraps (
			id    text PRIMARY KEY,
			at    bigint NOT NULL,  -- the wrap's created_at
			done  boolean NOT NULL,
			reply jsonb             -- the pending reply's gift wraps
		);
		CREATE INDEX agentpg_dm_wraps_at ON agentpg_dm_wraps (at) WHERE done;
		CREATE TABLE agentpg_dm_watermark (
			one  boolean PRIMARY KEY DEFAULT true CHECK (one),
			unix bigint NOT NULL
		);
		INSERT INTO agentpg_dm_watermark (unix) VALUES (0);`,
		// 3: the ASM op log (the source of truth of agent state) and the
		// schemas its ops need. body is the envelope's JSON, byte for byte.
		`CREATE TABLE agentpg_asm_ops (
			id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			agent      text NOT NULL,
			schema_uri text NOT NULL,
			doc_id     text NOT NULL,
			op_id      text NOT NULL,
			body       text NOT NULL,
			UNIQUE (schema_uri, doc_id, op_id)
		);
		CREATE INDEX agentpg_asm_ops_agent ON agentpg_asm_ops (agent, id);
		CREATE TABLE agentpg_asm_schemas (
			uri        text PRIMARY KEY,
			capability text NOT NULL,
			raw        text NOT NULL
		);`,
		// 4: the task queue (tasks.Backend).
		`CREATE TABLE agentpg_tasks (
			id       text PRIMARY KEY,
			status   text NOT NULL,
			assignee text NOT NULL DEFAULT '',
			deadline bigint NOT NULL DEFAULT 0, -- unix ms, 0: none
			priority integer NOT NULL DEFAULT 0,
			created  bigint NOT NULL,           -- unix ms
			doc      text NOT NULL              -- the Task as JSON
		);
		CREATE INDEX agentpg_tasks_status ON agentpg_tasks (status, deadline);
		CREATE INDEX agentpg_tasks_order ON agentpg_tasks (priority DESC, created, id);`,
		// 5: consent: approvals (asking order kept by seq) and revocations.
		`CREATE TABLE agentpg_approvals (
			id      text PRIMARY KEY,
			seq     bigint GENERATED ALWAYS AS IDENTITY,
			status  text NOT NULL,
			created bigint NOT NULL, -- unix ms
			doc     text NOT NULL    -- the Approval as JSON
		);
		CREATE INDEX agentpg_approvals_order ON agentpg_approvals (created, seq);
		CREATE TABLE agentpg_revoked (
			agent  text PRIMARY KEY,
			reason text NOT NULL DEFAULT '',
			at     bigint NOT NULL -- unix ms
		);`,
		// 6: directory registrations beyond events (directory.Registrations).
		`CREATE TABLE agentpg_dir_registered (agent text PRIMARY KEY);
		CREATE TABLE agentpg_dir_claims (
			key    text PRIMARY KEY,
			claim  text NOT NULL,   -- directory.Claim as JSON
			status text NOT NULL,
			at     bigint NOT NULL  -- unix ms
		);`,
		// 7: the agents' capability files (agentd.AgentFiles) and settings
		// shared by the instances (the HTTP API token).
		`CREATE TABLE agentpg_agent_files (
			agent text NOT NULL,
			path  text NOT NULL,
			data  bytea NOT NULL,
			PRIMARY KEY (agent, path)
		);
		CREATE TABLE agentpg_settings (
			key   text PRIMARY KEY,
			value text NOT NULL
		);`,
	},
}
