package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentnode/agentnode/internal/testkit/testrelay"
)

// With every turn taken, a page waits RenderWait, then answers 503 with
// Retry-After and the reason; once the turn is back, it is served.
func TestSite_BusyAnswers503(t *testing.T) {
	rel := testrelay.Open(t)
	s := New(Config{Store: rel, MaxRenders: 1, RenderWait: 10 * time.Millisecond})
	mux := http.NewServeMux()
	s.Mount(mux, rel)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	release, ok := s.turn(context.Background())
	if !ok {
		t.Fatal("the first turn was refused")
	}
	resp, err := http.Get(srv.URL + "/search?q=x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("with every turn taken: %s, Retry-After %q; want 503 with Retry-After", resp.Status, resp.Header.Get("Retry-After"))
	}
	release()
	resp, err = http.Get(srv.URL + "/search?q=x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with the turn back: %s", resp.Status)
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		n        int
		in, want string
	}{
		{3, "abc", "abc"}, {3, "abcd", "abc…"}, {2, "éèà", "éè…"}, {5, "éèà", "éèà"}, {3, "ab cd", "ab…"},
	} {
		if got := clip(tc.n, tc.in); got != tc.want {
			t.Errorf("clip(%d, %q) = %q, want %q", tc.n, tc.in, got, tc.want)
		}
		if got, want := clipped(tc.n, tc.in), clip(tc.n, tc.in) != tc.in; got != want {
			t.Errorf("clipped(%d, %q) = %v", tc.n, tc.in, got)
		}
	}
}
