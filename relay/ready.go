package relay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// readyTimeout bounds one readiness check: a database that does not
// answer within it is not ready.
const readyTimeout = 2 * time.Second

// Why a store is not ready: /readyz shows these texts, never the
// underlying error (which names hosts and users); the log has the detail.
var (
	// errStoreUnreadable: LMDB cannot begin a read transaction.
	errStoreUnreadable = errors.New("event store unreadable")
	// errPostgresDown: the database does not answer a ping in time.
	errPostgresDown = errors.New("postgres not answering")
	// errListenerDown: the PostgreSQL LISTEN connection (live fan-out
	// across instances) is lost and not yet re-established.
	errListenerDown = errors.New("postgres listener disconnected")
)

// publicReason is the stable text /readyz gives for err.
func publicReason(err error) string {
	for _, known := range []error{ErrClosed, errStoreUnreadable, errPostgresDown, errListenerDown} {
		if errors.Is(err, known) {
			return known.Error()
		}
	}
	return "not ready"
}

// Ready is nil when the relay can store and serve events now, else the
// reason: the store is closed, LMDB cannot begin a read transaction, or in
// PostgreSQL mode the database does not answer within readyTimeout or the
// LISTEN connection is down. Liveness (/healthz) is another matter: a node
// that is not ready is still alive and recovers by itself.
//
// One check runs at a time and its answer is reused for readyReuse, so a
// flood of probes costs the database at most a ping per readyReuse.
func (r *Relay) Ready(ctx context.Context) error {
	return r.readyState.get(ctx, func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readyTimeout)
		defer cancel()
		return r.store.readiness(ctx)
	}, r.logReadiness)
}

// logReadiness logs a change of readiness, with the detail /readyz leaves out.
func (r *Relay) logReadiness(prev, now error) {
	switch {
	case now != nil && (prev == nil || prev.Error() != now.Error()):
		r.log.Warn("not ready", "err", now)
	case now == nil && prev != nil:
		r.log.Info("ready again")
	}
}

// readyReuse is how long one readiness answer is reused.
const readyReuse = time.Second

// readyCache runs one readiness check at a time (callers in the
// meantime share its answer) and keeps its answer for readyReuse.
type readyCache struct {
	flight singleflight.Group
	mu     sync.Mutex
	at     time.Time
	err    error
}

// get returns the last answer while it is fresh, else the answer of the
// check in flight (starting one if none is), or ctx's error if ctx ends
// first. A check ends within readyTimeout.
func (c *readyCache) get(ctx context.Context, check func() error, changed func(prev, now error)) error {
	c.mu.Lock()
	fresh, err := !c.at.IsZero() && time.Since(c.at) < readyReuse, c.err
	c.mu.Unlock()
	if fresh {
		return err
	}
	ch := c.flight.DoChan("ready", func() (any, error) {
		err := check()
		c.mu.Lock()
		prev := c.err
		c.at, c.err = time.Now(), err
		c.mu.Unlock()
		changed(prev, err)
		return nil, err
	})
	select {
	case res := <-ch:
		return res.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// handleReady is GET /readyz: 200 {"ok":true}, or 503 with the reason.
func (r *Relay) handleReady(w http.ResponseWriter, req *http.Request) {
	if err := r.Ready(req.Context()); err != nil {
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ok": false, "reason": publicReason(err)})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// readiness checks that the store is open and LMDB begins a read transaction.
func (s *store) readiness(context.Context) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if err := s.reader.Ping(); err != nil {
		return fmt.Errorf("%w: %w", errStoreUnreadable, err)
	}
	return nil
}

// readiness checks that the backend is open, the database answers and the
// Listener is connected.
func (b *pgBackend) readiness(ctx context.Context) error {
	done, err := b.enter()
	if err != nil {
		return err
	}
	defer done()
	if err := b.pg.Ping(ctx); err != nil {
		return fmt.Errorf("%w: %w", errPostgresDown, err)
	}
	return b.listening.err()
}

// listenHealth is the state of the Listener's connection: down from an
// error until it listens or catches up again.
type listenHealth struct {
	mu   sync.Mutex
	last error
}

func (h *listenHealth) up() { h.mu.Lock(); h.last = nil; h.mu.Unlock() }

func (h *listenHealth) down(err error) { h.mu.Lock(); h.last = err; h.mu.Unlock() }

func (h *listenHealth) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last != nil {
		return fmt.Errorf("%w: %w", errListenerDown, h.last)
	}
	return nil
}
