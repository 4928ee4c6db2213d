package agentpg

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/dm"
)

// Ledger is dm.Ledger in the database, shared by the instances: a row per
// wrap (pending with its reply, or done) and one watermark. Has answers
// from memory (the rows as of Open or Reload, plus this handle's own
// writes); Begin decides in the database, so a wrap that another instance
// began or answered is refused with dm.ErrAnswered even when this
// instance's memory has not seen it.
type Ledger struct {
	db     *DB
	window time.Duration

	mu        sync.Mutex
	done      map[string]int64 // wrap id -> created_at
	pending   map[string]dm.PendingReply
	watermark int64
}

var _ dm.Ledger = (*Ledger)(nil)

// Ledger loads the DM ledger; window is the service's CatchUpWindow.
func (db *DB) Ledger(ctx context.Context, window time.Duration) (*Ledger, error) {
	l := &Ledger{db: db, window: window}
	return l, l.Reload(ctx)
}

// Reload reads the ledger again (at a takeover: the rows the previous
// holder wrote since Open).
func (l *Ledger) Reload(ctx context.Context) error {
	done, pending := map[string]int64{}, map[string]dm.PendingReply{}
	var wm int64
	err := pgx.BeginFunc(ctx, l.db.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT unix FROM agentpg_dm_watermark`).Scan(&wm); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, at, done, reply FROM agentpg_dm_wraps`)
		if err != nil {
			return err
		}
		var id string
		var at int64
		var isDone bool
		var reply []byte
		_, err = pgx.ForEachRow(rows, []any{&id, &at, &isDone, &reply}, func() error {
			if isDone {
				done[id] = at
				return nil
			}
			p := dm.PendingReply{At: at}
			if err := json.Unmarshal(reply, &p.Wraps); err != nil {
				return fmt.Errorf("pending reply of %s: %w", id, err)
			}
			pending[id] = p
			return nil
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("agentpg: load dm ledger: %w", err)
	}
	l.mu.Lock()
	l.done, l.pending, l.watermark = done, pending, wm
	l.mu.Unlock()
	return nil
}

// Has reports whether wrap id was processed or has a pending reply, as far
// as this instance knows (no I/O: it runs in the relay's store hook).
func (l *Ledger) Has(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, done := l.done[id]
	_, pending := l.pending[id]
	return done || pending
}

// Since is where a catch-up starts: a window before the watermark (the
// latest wrap processed by any instance, as of the last load), or before
// now.
func (l *Ledger) Since(now time.Time) nostr.Timestamp {
	l.mu.Lock()
	defer l.mu.Unlock()
	from := now
	if l.watermark > 0 {
		from = time.Unix(l.watermark, 0)
	}
	return nostr.Timestamp(from.Add(-l.window).Unix())
}

// Pending returns the replies begun and not marked done (as of the last
// load, plus this handle's own).
func (l *Ledger) Pending() map[string]dm.PendingReply {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.pending)
}

// Begin records reply as pending for wrap. A wrap that has a row already
// (begun or answered, by any instance) wraps dm.ErrAnswered.
func (l *Ledger) Begin(ctx context.Context, wrap *nostr.Event, reply []*nostr.Event) error {
	doc, err := json.Marshal(reply)
	if err != nil {
		return fmt.Errorf("agentpg: encode reply: %w", err)
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	tag, err := l.db.pool.Exec(ctx, `INSERT INTO agentpg_dm_wraps (id, at, done, reply) VALUES ($1, $2, false, $3)
		ON CONFLICT (id) DO NOTHING`, wrap.ID, int64(wrap.CreatedAt), doc)
	if err != nil {
		return fmt.Errorf("agentpg: begin dm reply: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if tag.RowsAffected() == 0 {
		l.done[wrap.ID] = int64(wrap.CreatedAt) // someone has it: never try again here
		return fmt.Errorf("%w: %s", dm.ErrAnswered, wrap.ID)
	}
	l.pending[wrap.ID] = dm.PendingReply{At: int64(wrap.CreatedAt), Wraps: reply}
	return nil
}

// Mark records wrap id (created at) as processed at now, drops its
// pending reply, advances the watermark and forgets ids older than the
// window before it, in one transaction.
func (l *Ledger) Mark(ctx context.Context, id string, at nostr.Timestamp, now time.Time) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	var wm int64
	err := pgx.BeginFunc(ctx, l.db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO agentpg_dm_wraps (id, at, done) VALUES ($1, $2, true)
			ON CONFLICT (id) DO UPDATE SET done = true, reply = NULL`, id, int64(at)); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `UPDATE agentpg_dm_watermark SET unix = greatest(unix, $1) RETURNING unix`, now.Unix()).Scan(&wm)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM agentpg_dm_wraps WHERE done AND at < $1`, wm-int64(l.window/time.Second))
		return err
	})
	if err != nil {
		return fmt.Errorf("agentpg: mark dm wrap: %w", err)
	}
	l.remember(id, int64(at), wm)
	return nil
}

// remember applies a committed Mark to memory.
func (l *Ledger) remember(id string, at, wm int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pending, id)
	l.done[id] = at
	l.watermark = max(l.watermark, wm)
	cut := l.watermark - int64(l.window/time.Second)
	for old, oldAt := range l.done {
		if oldAt < cut {
			delete(l.done, old)
		}
	}
}
