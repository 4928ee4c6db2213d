package relay

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// testRelay is a relay served over a real websocket for one test.
type testRelay struct {
	*Relay
	URL string // ws://...
	srv *httptest.Server
}

func openTestRelay(t *testing.T, dir string, limits Limits) *testRelay {
	t.Helper()
	return openTestRelayConfig(t, Config{DataDir: dir, Limits: limits, Version: "test"})
}

// testBackends are the storage backends each conformance test runs on:
// the same test, the same oracle.
var testBackends = []string{"lmdb", "postgres"}

// openBackendRelay opens a test relay on the named backend: LMDB in a
// temp dir, or a fresh database of the test's PostgreSQL cluster
// (internal/pgtest; skipped, saying why, where PostgreSQL is absent).
func openBackendRelay(t *testing.T, name string, limits Limits) *testRelay {
	t.Helper()
	if name == "postgres" {
		return openTestRelayConfig(t, Config{Postgres: pgtest.URL(t), Limits: limits, Version: "test"})
	}
	return openTestRelay(t, t.TempDir(), limits)
}

func openTestRelayConfig(t *testing.T, cfg Config) *testRelay {
	t.Helper()
	r, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r)
	tr := &testRelay{Relay: r, URL: "ws" + strings.TrimPrefix(srv.URL, "http"), srv: srv}
	t.Cleanup(tr.close)
	return tr
}

func (tr *testRelay) close() {
	tr.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tr.Relay.Close(ctx)
}

func (tr *testRelay) connect(t *testing.T) *nostr.Relay {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := nostr.RelayConnect(ctx, tr.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// signed builds and signs an event.
func signed(t testing.TB, sk string, kind int, tags nostr.Tags, content string) *nostr.Event {
	t.Helper()
	evt := &nostr.Event{Kind: kind, Tags: tags, Content: content, CreatedAt: nostr.Now()}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return evt
}

func publishWS(t *testing.T, c *nostr.Relay, evt *nostr.Event) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Publish(ctx, *evt)
}

func mustPublish(t *testing.T, c *nostr.Relay, evt *nostr.Event) {
	t.Helper()
	if err := publishWS(t, c, evt); err != nil {
		t.Fatalf("publish kind %d: %v", evt.Kind, err)
	}
}

func queryWS(t *testing.T, c *nostr.Relay, f nostr.Filter) []*nostr.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	evts, err := c.QuerySync(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	return evts
}

func hexID(b byte) string { return strings.Repeat(string("0123456789abcdef"[b%16]), 64) }
