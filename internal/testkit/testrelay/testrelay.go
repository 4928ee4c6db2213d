// Package testrelay opens the project's embedded relay in-process for
// tests: in a temporary data dir, quiet, closed when the test ends, and
// optionally served over a real websocket (httptest).
//
//	r := testrelay.Open(t)           // in-process: Publish, QuerySync, OnStored
//	url, r := testrelay.Serve(t)     // and at ws://127.0.0.1:port
//
// It is apart from testkit because it imports relay: testkit stays a leaf
// that any package's in-package tests can import (relay's own among them).
package testrelay

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/relay"
)

// Open opens a relay in t.TempDir(), configured by cfg's non-zero fields
// (DataDir and Logger are filled when empty), and closes it when the test
// ends.
func Open(t testing.TB, cfg ...relay.Config) *relay.Relay {
	t.Helper()
	var c relay.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	if c.DataDir == "" {
		c.DataDir = t.TempDir()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r, err := relay.Open(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r.Close(ctx)
	})
	return r
}

// Serve opens a relay as Open does and serves it behind httptest; url is
// its ws:// address. The server closes before the relay.
func Serve(t testing.TB, cfg ...relay.Config) (url string, r *relay.Relay) {
	t.Helper()
	r = Open(t, cfg...)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), r
}
