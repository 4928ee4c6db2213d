package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgxlisten"
	"github.com/nbd-wtf/go-nostr"
)

// ListenerName is the application_name of a Listener's connection (to find
// it in pg_stat_activity).
const ListenerName = "agentnode-pgstore-listener"

// catchUpBatch is how many events one catch-up query reads.
const catchUpBatch = 256

// Listener delivers the events committed through any Store on the
// database (this instance's included) to a callback: in commit order, each
// once, resuming after the last delivered sequence number when its
// connection is lost and re-established. An event deleted or replaced
// before the Listener read it is not delivered (its successor is). Expired
// events are not delivered.
type Listener struct {
	store   *Store
	deliver func(seq int64, evt *nostr.Event)
	last    int64 // only touched by the Run goroutine

	// ReconnectDelay is the pause before reconnecting (default 250ms).
	ReconnectDelay time.Duration
	// LogError, when set, receives connection and query errors.
	LogError func(error)
	// Progress, when set, is called (from Run's goroutine) after each
	// catch-up with the sequence number every commit up to which has been
	// delivered: the commit counter as read with the events, so it passes
	// refused, deleted, replaced and expired sequence numbers too. A writer
	// that knows its commit's counter (SaveBatchHead) can wait for it.
	Progress func(head int64)
	// Ephemeral, when set, receives (from Run's goroutine) the ephemeral
	// events other Stores sent with NotifyEphemeral, as they arrive (no
	// catch-up: those sent while the connection is down are lost).
	Ephemeral func(*nostr.Event)
	// Listening, when set, is called (from Run's goroutine) after each
	// (re)connect once every channel is listened on and the catch-up done.
	Listening func()

	channels, listened int // per connection; only touched by the Run goroutine

	connects atomic.Int64
}

// NewListener returns a Listener that calls deliver, from Run's goroutine,
// for every event committed after Run starts. It starts nothing.
func (s *Store) NewListener(deliver func(seq int64, evt *nostr.Event)) *Listener {
	return &Listener{store: s, deliver: deliver}
}

// Connects is how many times the Listener has (re)connected and caught up.
func (l *Listener) Connects() int64 { return l.connects.Load() }

// Run listens until ctx ends, then returns nil. It reads the current head
// first, so events committed before Run are not delivered.
func (l *Listener) Run(ctx context.Context) error {
	head, err := l.store.Head(ctx)
	if err != nil {
		return err
	}
	return l.RunAfter(ctx, head)
}

// Head is the commit counter: every event committed so far has a sequence
// number at or below it.
func (s *Store) Head(ctx context.Context) (int64, error) {
	var head int64
	if err := s.pool.QueryRow(ctx, `SELECT n FROM pgstore_seq`).Scan(&head); err != nil {
		return 0, fmt.Errorf("pgstore: head: %w", err)
	}
	return head, nil
}

// RunAfter is Run delivering the events committed after sequence number
// after (a Head read earlier).
func (l *Listener) RunAfter(ctx context.Context, after int64) error {
	l.last = after
	delay := l.ReconnectDelay
	if delay == 0 {
		delay = 250 * time.Millisecond
	}
	pl := &pgxlisten.Listener{Connect: l.connect, ReconnectDelay: delay, LogError: l.logError}
	pl.Handle(Channel, handler{l})
	l.channels = 1
	if l.Ephemeral != nil {
		pl.Handle(EphemeralChannel, ephemeralHandler{l})
		l.channels = 2
	}
	err := pl.Listen(ctx)
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("pgstore: listener: %w", err)
}

func (l *Listener) connect(ctx context.Context) (*pgx.Conn, error) {
	cfg := l.store.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = ListenerName
	return pgx.ConnectConfig(ctx, cfg)
}

func (l *Listener) logError(_ context.Context, err error) {
	if l.LogError != nil && !errors.Is(err, context.Canceled) {
		l.LogError(err)
	}
}

// handler adapts a Listener to pgxlisten: the backlog (after every LISTEN,
// so after every reconnect) and each notification both mean "catch up".
type handler struct{ l *Listener }

func (h handler) HandleBacklog(ctx context.Context, _ string, conn *pgx.Conn) error {
	h.l.connects.Add(1)
	err := h.l.catchUp(ctx, conn)
	h.l.listenedOne()
	return err
}

// listenedOne counts a channel listened on; after the last of a
// connection it calls Listening. pgxlisten listens on the channels one
// after the other, each followed by its backlog call.
func (l *Listener) listenedOne() {
	l.listened++
	if l.listened < l.channels {
		return
	}
	l.listened = 0
	if l.Listening != nil {
		l.Listening()
	}
}

func (h handler) HandleNotification(ctx context.Context, n *pgconn.Notification, conn *pgx.Conn) error {
	seq, _, _ := strings.Cut(n.Payload, ":")
	if s, err := strconv.ParseInt(seq, 10, 64); err == nil && s <= h.l.last {
		return nil // already delivered by an earlier catch-up
	}
	return h.l.catchUp(ctx, conn)
}

// catchUp delivers every committed event after l.last in seq order. Seq
// order is commit order (commits are serialised on pgstore_seq), so once
// seq N is visible every seq below it is too: nothing is skipped. The
// counter and the events are read in one snapshot (a read-only repeatable
// read transaction, pipelined), so that l.last can move to the counter
// once every event up to it is delivered.
func (l *Listener) catchUp(ctx context.Context, conn *pgx.Conn) error {
	for {
		b := &pgx.Batch{}
		b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
		b.Queue(`SELECT n FROM pgstore_seq`)
		b.Queue(`SELECT seq, `+eventCols+` FROM pgstore_events
			WHERE seq > $1 AND (expires_at IS NULL OR expires_at > $2) ORDER BY seq LIMIT $3`,
			l.last, int64(nostr.Now()), catchUpBatch)
		b.Queue(`COMMIT`)
		br := conn.SendBatch(ctx, b)
		var head int64
		_, err := br.Exec()
		if err == nil {
			err = br.QueryRow().Scan(&head)
		}
		var seqs []int64
		var evts []*nostr.Event
		if err == nil {
			var rows pgx.Rows
			if rows, err = br.Query(); err == nil {
				evts, err = scanEvents(rows, &seqs)
			}
		}
		if err == nil {
			_, err = br.Exec()
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		for i, evt := range evts {
			l.deliver(seqs[i], evt)
			l.last = seqs[i]
		}
		if len(evts) < catchUpBatch {
			l.last = max(l.last, head)
			if l.Progress != nil {
				l.Progress(l.last)
			}
			return nil
		}
	}
}
