package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

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
	// SearchText, when set, is the text NIP-50 search matches for an event
	// ("" makes it unsearchable); nil: the content and the values of the
	// descriptive tags (searchTags). Set it before the first save.
	SearchText func(*nostr.Event) string

	origin string // names this Store in ephemeral notifications
}

// DefaultMaxConns is the pool size when url sets no pool_max_conns: the
// relay's reads take all but two (relay/pgbackend.go), the writer and
// ephemeral notifications those two.
const DefaultMaxConns = 16

// Open connects to the database at url and migrates its schema.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: open: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = max(cfg.MaxConns, DefaultMaxConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: open: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{pool: pool, origin: newOrigin()}, nil
}

// MaxConns is how many connections the store's pool opens at most.
func (s *Store) MaxConns() int { return int(s.pool.Config().MaxConns) }

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
// same address end with the same winner. NIP-09: a kind 5 event deletes the
// events of its author that it names (an "e" id, or an "a" address up to
// its created_at), and an event a stored deletion of its author covers is
// refused with ErrDeleted, so a deleted event stays deleted; both within
// the batch too. Other results: ErrDuplicate, ErrEphemeral.
//
// The statements of a batch are pipelined (one pgx.Batch, one round trip);
// only refused events cost a second one, to tell why. Commits are
// serialised on the pgstore_seq row, so seq order is commit order: that is
// what lets a Listener resume after a gap without losing or repeating an
// event (seq may have gaps: refused events consume a number).
func (s *Store) SaveBatch(ctx context.Context, evts []*nostr.Event) (results []error, err error) {
	results, _, err = s.SaveBatchHead(ctx, evts)
	return results, err
}

// SaveBatchHead is SaveBatch also returning the commit counter its
// transaction set: a Listener whose Progress reaches it has delivered
// every event the batch stored.
func (s *Store) SaveBatchHead(ctx context.Context, evts []*nostr.Event) (results []error, head int64, err error) {
	results = make([]error, len(evts))
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var base int64
		if err := tx.QueryRow(ctx, `SELECT n FROM pgstore_seq FOR UPDATE`).Scan(&base); err != nil {
			return err
		}
		b, queued := s.queue(evts, base, results)
		last := base + int64(len(evts))
		head = last
		b.Queue(`UPDATE pgstore_seq SET n = $1`, last)
		b.Queue(`SELECT pg_notify($1, $2) FROM pgstore_events WHERE seq > $3 LIMIT 1`,
			Channel, strconv.FormatInt(last, 10)+":", base)
		if err := s.run(ctx, tx, b, queued, results); err != nil {
			return err
		}
		return s.explain(ctx, tx, evts, results)
	})
	if err != nil {
		return nil, 0, fmt.Errorf("pgstore: save: %w", err)
	}
	return results, head, nil
}

// queued says which statement of the batch belongs to which event.
type queued struct {
	event  int  // index in the batch
	insert bool // the INSERT (returns seq) rather than a deletion's DELETE
}

// queue builds the pipeline: per event its INSERT (and a kind 5's DELETE).
// Ephemeral and unencodable events are answered at once.
func (s *Store) queue(evts []*nostr.Event, base int64, results []error) (*pgx.Batch, []queued) {
	b := &pgx.Batch{}
	var q []queued
	for i, evt := range evts {
		if nostr.IsEphemeralKind(evt.Kind) {
			results[i] = ErrEphemeral
			continue
		}
		r, err := toRow(evt, s.SearchText)
		if err != nil {
			results[i] = err
			continue
		}
		sql := insertRegular
		if r.addr != nil {
			sql = insertReplacing
		}
		b.Queue(sql, evt.ID, base+int64(i)+1, evt.PubKey, int64(evt.CreatedAt), evt.Kind, r.tags,
			evt.Content, evt.Sig, r.addr, r.expiresAt, r.tagvalues, r.search)
		q = append(q, queued{event: i, insert: true})
		if evt.Kind == 5 {
			ids, addrs := deletionTargets(evt)
			b.Queue(deleteTargets, evt.PubKey, evt.ID, ids, addrs, int64(evt.CreatedAt))
			q = append(q, queued{event: i})
		}
	}
	return b, q
}

// run sends the pipeline and reads its answers: an INSERT that returned no
// row is marked errRefused, to be explained.
func (s *Store) run(ctx context.Context, tx pgx.Tx, b *pgx.Batch, q []queued, results []error) error {
	br := tx.SendBatch(ctx, b)
	for _, st := range q {
		if !st.insert {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return err
			}
			continue
		}
		var seq int64
		err := br.QueryRow().Scan(&seq)
		if errors.Is(err, pgx.ErrNoRows) {
			results[st.event] = errRefused
		} else if err != nil {
			br.Close()
			return err
		}
	}
	return br.Close()
}

// errRefused marks an event the INSERT did not store, until explain says why.
var errRefused = errors.New("pgstore: refused")

// explain tells each refused event why: a duplicate, covered by a
// deletion, or superseded (in the same transaction, so under its locks).
func (s *Store) explain(ctx context.Context, tx pgx.Tx, evts []*nostr.Event, results []error) error {
	for i, res := range results {
		if res != errRefused {
			continue
		}
		var dup, deleted bool
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pgstore_events WHERE id = $1), `+deletedBy,
			evts[i].ID, evts[i].PubKey, address(evts[i]), int64(evts[i].CreatedAt)).Scan(&dup, &deleted)
		switch {
		case err != nil:
			return err
		case dup:
			results[i] = ErrDuplicate
		case deleted:
			results[i] = ErrDeleted
		default:
			results[i] = ErrSuperseded
		}
	}
	return nil
}

// insertValues selects the new row unless a stored deletion by the same
// author covers it ($1 id, $3 pubkey, $4 created_at, $5 kind, $9 addr).
const insertValues = `INSERT INTO pgstore_events
	(id, seq, pubkey, created_at, kind, tags, content, sig, addr, expires_at, tagvalues, search)
	SELECT $1::text, $2::bigint, $3::text, $4::bigint, $5::integer, $6::jsonb, $7::text, $8::text,
		$9::text, $10::bigint, $11::text[], to_tsvector('simple', $12::text)
	WHERE $5::integer = 5 OR NOT (` + deletedByNumbered + `)`

// deletedByNumbered is deletedBy over the parameters of insertValues.
const deletedByNumbered = `EXISTS (SELECT 1 FROM pgstore_events d WHERE d.kind = 5 AND d.pubkey = $3::text
		AND d.tagvalues && ARRAY['e' || chr(31) || $1::text])
	OR ($9::text IS NOT NULL AND EXISTS (SELECT 1 FROM pgstore_events d WHERE d.kind = 5
		AND d.pubkey = $3::text AND d.created_at >= $4::bigint
		AND d.tagvalues && ARRAY['a' || chr(31) || $9::text]))`

// deletedBy is the same test with $1 id, $2 pubkey, $3 addr, $4 created_at.
const deletedBy = `EXISTS (SELECT 1 FROM pgstore_events d WHERE d.kind = 5 AND d.pubkey = $2::text
		AND d.tagvalues && ARRAY['e' || chr(31) || $1::text])
	OR ($3::text IS NOT NULL AND EXISTS (SELECT 1 FROM pgstore_events d WHERE d.kind = 5
		AND d.pubkey = $2::text AND d.created_at >= $4::bigint
		AND d.tagvalues && ARRAY['a' || chr(31) || $3::text]))`

const insertRegular = insertValues + ` ON CONFLICT (id) DO NOTHING RETURNING seq`

// insertReplacing replaces the row of the same address only when the new
// event supersedes it: ON CONFLICT locks the conflicting row and evaluates
// the WHERE on its latest committed version.
const insertReplacing = insertValues + ` ON CONFLICT (addr) DO UPDATE SET
	id = EXCLUDED.id, seq = EXCLUDED.seq, created_at = EXCLUDED.created_at,
	tags = EXCLUDED.tags, content = EXCLUDED.content, sig = EXCLUDED.sig,
	expires_at = EXCLUDED.expires_at, tagvalues = EXCLUDED.tagvalues, search = EXCLUDED.search
	WHERE EXCLUDED.created_at > pgstore_events.created_at
	   OR (EXCLUDED.created_at = pgstore_events.created_at AND EXCLUDED.id < pgstore_events.id)
	RETURNING seq`

// deleteTargets removes what a kind 5 event ($2, by $1) names: ids ($3)
// and addresses ($4) up to its created_at ($5), of its own author only.
const deleteTargets = `DELETE FROM pgstore_events WHERE pubkey = $1 AND id <> $2
	AND (id = ANY($3::text[]) OR (addr = ANY($4::text[]) AND created_at <= $5))`

// deletionTargets are the ids and addresses a kind 5 event names.
func deletionTargets(del *nostr.Event) (ids, addrs []string) {
	ids, addrs = []string{}, []string{}
	for _, tag := range del.Tags {
		if len(tag) < 2 {
			continue
		}
		switch tag[0] {
		case "e":
			ids = append(ids, tag[1])
		case "a":
			addrs = append(addrs, tag[1])
		}
	}
	return ids, addrs
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

// CheckURL reports whether url is a connection string the store can use
// (postgres:// or postgresql:// URL, or key=value DSN), without connecting.
// The error never repeats the URL (it may hold a password).
func CheckURL(url string) error {
	if _, err := pgxpool.ParseConfig(url); err != nil {
		return errors.New("pgstore: not a PostgreSQL connection string")
	}
	return nil
}
