package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentnode/agentnode/internal/pgmigrate"
)

// migrateLock is the advisory lock key held while migrating, so that
// instances starting at once migrate one after the other.
const migrateLock = 0x61676e64_70677331 // "agnd" "pgs1"

// migrations are applied in order; migrations[i] brings the schema to
// version i+1. Never edit one that has shipped: append.
var migrations = []string{
	// 1: events, the commit-ordered sequence and its counter.
	`CREATE TABLE pgstore_events (
		id         text PRIMARY KEY,
		seq        bigint NOT NULL UNIQUE,
		pubkey     text NOT NULL,
		created_at bigint NOT NULL,
		kind       integer NOT NULL,
		tags       jsonb NOT NULL,
		content    text NOT NULL,
		sig        text NOT NULL,
		addr       text UNIQUE,
		expires_at bigint,
		tagvalues  text[] NOT NULL,
		search     tsvector NOT NULL
	);
	CREATE INDEX pgstore_events_time ON pgstore_events (created_at DESC, id);
	CREATE INDEX pgstore_events_author ON pgstore_events (pubkey, created_at DESC);
	CREATE INDEX pgstore_events_kind ON pgstore_events (kind, created_at DESC);
	CREATE INDEX pgstore_events_tags ON pgstore_events USING gin (tagvalues);
	CREATE INDEX pgstore_events_search ON pgstore_events USING gin (search);
	CREATE INDEX pgstore_events_expires ON pgstore_events (expires_at) WHERE expires_at IS NOT NULL;
	CREATE TABLE pgstore_seq (one boolean PRIMARY KEY DEFAULT true CHECK (one), n bigint NOT NULL);
	INSERT INTO pgstore_seq (n) VALUES (0);`,
	// 2: one row per (event, tag value) ordered by created_at, so that a
	// query on one tag value walks its newest events and stops at the
	// limit (the GIN index on tagvalues finds every match, then sorts
	// them all). Kept by a trigger; values longer than maxIndexedTag
	// bytes are left out (a btree entry is at most ~2.7 kB), and queries
	// on them use the GIN index.
	`CREATE TABLE pgstore_tags (
		tag_id      text NOT NULL,
		tv          text NOT NULL,
		tag_created bigint NOT NULL
	);
	CREATE INDEX pgstore_tags_order ON pgstore_tags (tv, tag_created DESC, tag_id);
	CREATE INDEX pgstore_tags_event ON pgstore_tags (tag_id);
	CREATE FUNCTION pgstore_tags_sync() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF TG_OP IN ('UPDATE', 'DELETE') THEN
			DELETE FROM pgstore_tags WHERE tag_id = OLD.id;
		END IF;
		IF TG_OP IN ('INSERT', 'UPDATE') THEN
			INSERT INTO pgstore_tags (tag_id, tv, tag_created)
				SELECT DISTINCT NEW.id, v, NEW.created_at FROM unnest(NEW.tagvalues) v WHERE octet_length(v) <= 512;
		END IF;
		RETURN NULL;
	END $$;
	CREATE TRIGGER pgstore_tags_sync AFTER INSERT OR UPDATE OR DELETE ON pgstore_events
		FOR EACH ROW EXECUTE FUNCTION pgstore_tags_sync();
	INSERT INTO pgstore_tags (tag_id, tv, tag_created)
		SELECT DISTINCT e.id, v, e.created_at FROM pgstore_events e, unnest(e.tagvalues) v WHERE octet_length(v) <= 512;`,
}

// maxIndexedTag is the longest "key\x1fvalue" (bytes) pgstore_tags holds
// (migration 2).
const maxIndexedTag = 512

// schema is pgstore's versioned schema (internal/pgmigrate: the
// pgstore_schema table, applied under the advisory lock migrateLock).
var schema = pgmigrate.Schema{Name: "pgstore", Lock: migrateLock, Steps: migrations}

// SchemaVersion is the schema version this binary knows.
var SchemaVersion = schema.Version()

// migrate brings the database to SchemaVersion under an advisory lock and
// refuses a database whose schema is newer than this binary
// (ErrSchemaTooNew).
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	err := schema.Migrate(ctx, pool)
	if errors.Is(err, pgmigrate.ErrTooNew) {
		return fmt.Errorf("%w: %w", ErrSchemaTooNew, err)
	}
	return err
}
