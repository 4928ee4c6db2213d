package policies

import (
	"net/http"
	"strings"
	"testing"
)

// An address past its bound gets 429, any address past the total 503;
// released slots are taken again.
func TestConnLimiter_Admit(t *testing.T) {
	l := NewConnLimiter(2, 3)
	var releases []func()
	admit := func(ip string, wantStatus int) {
		t.Helper()
		rel, status, reason := l.Admit(ip)
		if status != wantStatus {
			t.Fatalf("Admit(%s) = %d %q, want %d", ip, status, reason, wantStatus)
		}
		if status != 0 && !strings.HasPrefix(reason, "rate-limited: ") {
			t.Fatalf("reason %q has no rate-limited: prefix", reason)
		}
		if rel != nil {
			releases = append(releases, rel)
		}
	}
	admit("1.1.1.1", 0)
	admit("1.1.1.1", 0)
	admit("1.1.1.1", http.StatusTooManyRequests)
	admit("2.2.2.2", 0)
	admit("3.3.3.3", http.StatusServiceUnavailable)
	releases[0]()
	releases[0]() // a second release is a no-op
	if got := l.Open(); got != 2 {
		t.Fatalf("Open() = %d after one release, want 2", got)
	}
	admit("1.1.1.1", 0)
}

// A bound <= 0 is none.
func TestConnLimiter_noBounds(t *testing.T) {
	l := NewConnLimiter(0, -1)
	for range 1000 {
		if _, status, _ := l.Admit("1.1.1.1"); status != 0 {
			t.Fatal("refused without bounds")
		}
	}
}
