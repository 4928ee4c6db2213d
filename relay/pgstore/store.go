package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nbd-wtf/go-nostr"
)

// Channel is the LISTEN/NOTIFY channel on which every committed event is
// announced as "seq:id" (ids only: NOTIFY payloads stop at 8000 bytes).
const Channel = "pgstore_events"

// DefaultMaxLimit caps a query's results when the filter gives no limit or
// a larger one.
const DefaultMaxLimit = 500

// Store is a PostgreSQL event store. It is safe for concurrent use, also by
// several processes (instances) on the same database.
type Store struct {
	pool *pgxpool.Pool
	// MaxLimit caps the results of one Query (DefaultMaxLimit when 0).
	MaxLimit int
}

// Open connects to the database at url and migrates its schema.
func Open(ctx context.Context, url string) (*Store, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: open: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{pool: pool}, nil
}

// Close closes the store's connections.
func (s *Store) Close() { s.pool.Close() }

// Save stores one event: see SaveBatch.
func (s *Store) Save(ctx context.Context, evt *nostr.Event) error {
	errs, err := s.SaveBatch(ctx, []*nostr.Event{evt})
	if err != nil {
		return err
	}
	return errs[0]
}

// SaveBatch stores events in one transaction: when it returns a nil error,
// every event whose entry in results is nil is committed (and announced on
// Channel), in the order given. A replaceable or addressable event replaces
// the stored version when it supersedes it (later created_at, or the same
// and a lower id) and is refused with ErrSuperseded otherwise; this is
// decided by the database under the row's lock, so instances racing on the
// same address end with the same winner. Other results: ErrDuplicate,
// ErrEphemeral.
//
// Commits are serialised on the pgstore_seq row, so seq order is commit
// order: that is what lets a Listener resume after a gap without losing or
// repeating an event.
func (s *Store) SaveBatch(ctx context.Context, evts []*nostr.Event) (results []error, err error) {
	results = make([]error, len(evts))
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var base int64
		if err := tx.QueryRow(ctx, `SELECT n FROM pgstore_seq FOR UPDATE`).Scan(&base); err != nil {
			return err
		}
		next := base
		for i, evt := range evts {
			results[i] = s.insert(ctx, tx, evt, next+1)
			if results[i] == nil {
				next++
			}
		}
		if next == base {
			return nil
		}
		_, err := tx.Exec(ctx, `UPDATE pgstore_seq SET n = $1`, next)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: save: %w", err)
	}
	return results, nil
}

const insertCols = `INSERT INTO pgstore_events
	(id, seq, pubkey, created_at, kind, tags, content, sig, addr, expires_at, tagvalues, search)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, to_tsvector('simple', $12))`

const insertRegular = insertCols + ` ON CONFLICT (id) DO NOTHING RETURNING seq`

// insertReplacing replaces the row of the same address only when the new
// event supersedes it: ON CONFLICT locks the conflicting row and evaluates
// the WHERE on its latest committed version.
const insertReplacing = insertCols + ` ON CONFLICT (addr) DO UPDATE SET
	id = EXCLUDED.id, seq = EXCLUDED.seq, created_at = EXCLUDED.created_at,
	tags = EXCLUDED.tags, content = EXCLUDED.content, sig = EXCLUDED.sig,
	expires_at = EXCLUDED.expires_at, tagvalues = EXCLUDED.tagvalues, search = EXCLUDED.search
	WHERE EXCLUDED.created_at > pgstore_events.created_at
	   OR (EXCLUDED.created_at = pgstore_events.created_at AND EXCLUDED.id < pgstore_events.id)
	RETURNING seq`

// insert stores one event with sequence number seq and announces it.
func (s *Store) insert(ctx context.Context, tx pgx.Tx, evt *nostr.Event, seq int64) error {
	if nostr.IsEphemeralKind(evt.Kind) {
		return ErrEphemeral
	}
	r, err := toRow(evt)
	if err != nil {
		return err
	}
	sql := insertRegular
	if r.addr != nil {
		sql = insertReplacing
	}
	var got int64
	err = tx.QueryRow(ctx, sql, evt.ID, seq, evt.PubKey, int64(evt.CreatedAt), evt.Kind, r.tags,
		evt.Content, evt.Sig, r.addr, r.expiresAt, r.tagvalues, r.search).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return s.refusal(ctx, tx, evt.ID)
	}
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, fmt.Sprintf("%d:%s", seq, evt.ID))
	return err
}

// refusal tells a duplicate from a superseded replaceable.
func (s *Store) refusal(ctx context.Context, tx pgx.Tx, id string) error {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pgstore_events WHERE id = $1)`, id).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return ErrDuplicate
	}
	return ErrSuperseded
}

// Delete removes the event with the given id; it reports whether there was one.
func (s *Store) Delete(ctx context.Context, id string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM pgstore_events WHERE id = $1`, id)
	if err != nil {
		return false, fmt.Errorf("pgstore: delete: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// PurgeExpired deletes the events whose NIP-40 expiration is at or before
// now (queries already hide them) and returns how many it deleted.
func (s *Store) PurgeExpired(ctx context.Context, now nostr.Timestamp) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM pgstore_events WHERE expires_at <= $1`, int64(now))
	if err != nil {
		return 0, fmt.Errorf("pgstore: purge expired: %w", err)
	}
	return tag.RowsAffected(), nil
}
