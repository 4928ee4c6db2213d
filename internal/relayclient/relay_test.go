package relayclient_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// serve runs the embedded relay behind a real websocket server.
func serve(t *testing.T) (*httptest.Server, *relay.Relay) {
	t.Helper()
	r, err := relay.Open(context.Background(), relay.Config{DataDir: t.TempDir(), Logger: quiet, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r.Close(ctx)
	})
	return srv, r
}

func note(t *testing.T, k testkit.Key, text string) *nostr.Event {
	t.Helper()
	evt := &nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: text, Tags: nostr.Tags{}}
	if err := evt.Sign(k.SK); err != nil {
		t.Fatal(err)
	}
	return evt
}

func TestRelay_PublishQuery(t *testing.T) {
	srv, _ := serve(t)
	k := testkit.NewKey(t)
	c := relayclient.New("ws"+strings.TrimPrefix(srv.URL, "http"), k.SK, quiet)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evt := note(t, k, "hello")
	if err := c.Publish(ctx, evt); err != nil {
		t.Fatal(err)
	}
	got, err := c.Query(ctx, nostr.Filter{Authors: []string{k.PK}})
	if err != nil || len(got) != 1 || got[0].ID != evt.ID {
		t.Fatalf("Query = %v, %v; want the published event", got, err)
	}
}

// A relay that goes away fails the next call with an error (no panic,
// no hang), and a relay back on the same address is reached again.
func TestRelay_dropThenReconnect(t *testing.T) {
	srv, _ := serve(t)
	k := testkit.NewKey(t)
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	c := relayclient.New(url, k.SK, quiet)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Publish(ctx, note(t, k, "one")); err != nil {
		t.Fatal(err)
	}
	srv.CloseClientConnections() // the connection drops under the client
	var err error
	testkit.WaitFor(t, 10*time.Second, "a publish after the drop", func() bool {
		err = c.Publish(ctx, note(t, k, "two")) // fails once, then reconnects
		return err == nil
	})
	got, err := c.Query(ctx, nostr.Filter{Authors: []string{k.PK}})
	if err != nil || len(got) != 2 {
		t.Fatalf("after the reconnect: %d events, %v; want 2", len(got), err)
	}
}
