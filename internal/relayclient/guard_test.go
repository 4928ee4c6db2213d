package relayclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/netguard"
	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
)

// counted runs the embedded relay on loopback behind a handler that
// counts the requests reaching it.
func counted(t *testing.T) (url string, hits *atomic.Int64) {
	t.Helper()
	srv, _ := serve(t)
	hits = new(atomic.Int64)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return "ws" + strings.TrimPrefix(front.URL, "http"), hits
}

// A guarded dial of a relay on loopback is refused before any byte
// reaches it, saying why; the same dial allowed goes through.
func TestDial_guard(t *testing.T) {
	url, hits := counted(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	_, err := relayclient.Dial(ctx, url, relayclient.Options{Guard: &netguard.Policy{Label: "relayclient"}})
	var blocked *netguard.BlockedError
	if !errors.As(err, &blocked) || blocked.Why != "loopback" {
		t.Fatalf("guarded dial of %s: err = %v, want a loopback *netguard.BlockedError", url, err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the relay saw %d requests, want 0", n)
	}
	for _, g := range []*netguard.Policy{nil, {AllowPrivate: true}, {AllowHosts: []string{"127.0.0.1"}}} {
		c, err := relayclient.Dial(ctx, url, relayclient.Options{Guard: g, Verify: true})
		if err != nil {
			t.Fatalf("Guard %+v: %v", g, err)
		}
		if _, err := c.Query(ctx, nostr.Filters{{Kinds: []int{1}, Limit: 1}}); err != nil {
			t.Errorf("Guard %+v: query: %v", g, err)
		}
		c.Close()
	}
	if n := hits.Load(); n != 3 {
		t.Errorf("the relay saw %d requests, want 3 (the allowed dials)", n)
	}
}

// A Relay made with NewWith dials through its Options' Guard every time.
func TestNewWith_guard(t *testing.T) {
	url, hits := counted(t)
	k := testkit.NewKey(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := relayclient.NewWith(url, k.SK, quiet, relayclient.Options{Guard: &netguard.Policy{}})
	defer r.Close()
	var blocked *netguard.BlockedError
	if err := r.Publish(ctx, note(t, k, "x")); !errors.As(err, &blocked) || hits.Load() != 0 {
		t.Fatalf("Publish = %v with %d requests seen; want a BlockedError and none", err, hits.Load())
	}
	ok := relayclient.NewWith(url, k.SK, quiet, relayclient.Options{Guard: &netguard.Policy{AllowPrivate: true}})
	defer ok.Close()
	if err := ok.Publish(ctx, note(t, k, "y")); err != nil {
		t.Fatal(err)
	}
}
