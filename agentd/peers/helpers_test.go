package peers_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/peers"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// testWait bounds every wait on the syncer: generous, so that a busy CPU
// (a parallel test run) slows the tests down instead of failing them.
const testWait = 30 * time.Second

var _ peers.LocalStore = (*relay.Relay)(nil)

// fast is the backoff of every test: a restarted peer is found again at once.
var fast = peers.Backoff{Min: 10 * time.Millisecond, Max: 100 * time.Millisecond}

// hooked is the local store as the daemon wires it: the relay, plus the
// store hook that calls Syncer.Notify (and, for benchmarks, reports).
type hooked struct {
	*relay.Relay
	syncer atomic.Pointer[peers.Syncer]
	stored chan *nostr.Event // nil: nobody listens
}

func (h *hooked) Publish(ctx context.Context, evt *nostr.Event) error {
	if err := h.Relay.Publish(ctx, evt); err != nil {
		return err
	}
	if s := h.syncer.Load(); s != nil {
		s.Notify(evt)
	}
	if h.stored != nil {
		select {
		case h.stored <- evt:
		default:
		}
	}
	return nil
}

// node is a relay served on loopback.
type node struct {
	*hooked
	URL  string
	srv  *httptest.Server
	once sync.Once
}

// openNode opens the relay in dir and serves it, on ln when given.
func openNode(tb testing.TB, dir string, ln net.Listener) *node {
	tb.Helper()
	r, err := relay.Open(context.Background(), relay.Config{DataDir: dir, Version: "test", Logger: quiet()})
	if err != nil {
		tb.Fatal(err)
	}
	n := serve(tb, r, ln)
	tb.Cleanup(n.stop)
	return n
}

func serve(tb testing.TB, r *relay.Relay, ln net.Listener) *node {
	tb.Helper()
	srv := httptest.NewUnstartedServer(r)
	if ln != nil {
		srv.Listener.Close()
		srv.Listener = ln
	}
	srv.Start()
	return &node{hooked: &hooked{Relay: r}, URL: "ws" + strings.TrimPrefix(srv.URL, "http"), srv: srv}
}

// stop closes the server, says goodbye to every client and closes the
// relay (once: tests stop nodes early, cleanup stops them again).
func (n *node) stop() {
	n.once.Do(func() {
		n.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n.Relay.Close(ctx)
	})
}

func (n *node) publish(tb testing.TB, evts ...*nostr.Event) {
	tb.Helper()
	for _, evt := range evts {
		if err := n.hooked.Publish(context.Background(), evt); err != nil {
			tb.Fatalf("publish kind %d: %v", evt.Kind, err)
		}
	}
}

func (n *node) has(tb testing.TB, id string) bool {
	return has(tb, n.Relay, id)
}

func has(tb testing.TB, r *relay.Relay, id string) bool {
	tb.Helper()
	evts, err := r.QuerySync(context.Background(), nostr.Filter{IDs: []string{id}})
	if err != nil {
		tb.Fatal(err)
	}
	return len(evts) == 1
}

// run starts s.Run; cleanup cancels it and waits for it to return.
func run(tb testing.TB, s *peers.Syncer) {
	tb.Helper()
	tb.Cleanup(runFor(tb, s))
}

// runFor starts s.Run and returns the function that stops it: it cancels
// Run's context and waits for Run to return.
func runFor(tb testing.TB, s *peers.Syncer) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					tb.Errorf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				tb.Error("Run did not return 10 s after its context ended")
			}
		})
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testLogger shows the syncer's debug log with the test's output (-v or on failure).
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// key is a test identity.
type key = testkit.Key

func sign(tb testing.TB, k key, evt *nostr.Event) *nostr.Event {
	tb.Helper()
	if evt.CreatedAt == 0 {
		evt.CreatedAt = nostr.Now()
	}
	if err := evt.Sign(k.SK); err != nil {
		tb.Fatal(err)
	}
	return evt
}

func definition(tb testing.TB, k key, title string) *nostr.Event {
	return sign(tb, k, &nostr.Event{Kind: 4199, Tags: nostr.Tags{{"title", title}, {"role", "tester"}}})
}

func lesson(tb testing.TB, k key, defID, title string, at nostr.Timestamp) *nostr.Event {
	return sign(tb, k, &nostr.Event{
		Kind: 4129, CreatedAt: at, Content: "lesson: " + title,
		Tags: nostr.Tags{{"title", title}, {"category", "test"}, {"e", defID}},
	})
}

// lessonsOf is the Interests filter of one definition's lessons.
func lessonsOf(defIDs ...string) nostr.Filter {
	return nostr.Filter{Kinds: []int{4129}, Tags: nostr.TagMap{"e": defIDs}}
}

func filters(fs ...nostr.Filter) func() []nostr.Filter {
	return func() []nostr.Filter { return fs }
}
