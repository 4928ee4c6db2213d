package policies

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/relay/internal/khatru"
	"github.com/nbd-wtf/go-nostr"
)

func TestClientIP(t *testing.T) {
	proxies, err := ParsePrefixes([]string{"10.0.0.0/8", "192.0.2.7", "2001:db8::/32"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, remote, xff, xri string
		trusted                []netip.Prefix
		want                   string
	}{
		{"no proxy trusted: the header is ignored", "203.0.113.5:4000", "198.51.100.1", "", nil, "203.0.113.5"},
		{"untrusted peer: the header is ignored", "203.0.113.5:4000", "198.51.100.1", "198.51.100.2", proxies, "203.0.113.5"},
		{"trusted peer: the client", "10.1.2.3:4000", "198.51.100.1", "", proxies, "198.51.100.1"},
		{"trusted single address", "192.0.2.7:4000", "198.51.100.1", "", proxies, "198.51.100.1"},
		{"rightmost untrusted hop wins", "10.1.2.3:4000", "1.1.1.1, 198.51.100.1, 10.9.9.9", "", proxies, "198.51.100.1"},
		{"trusted peer without headers: the peer", "10.1.2.3:4000", "", "", proxies, "10.1.2.3"},
		{"a private client behind the proxy", "10.1.2.3:4000", "192.168.1.20", "", proxies, "192.168.1.20"},
		{"X-Real-IP without X-Forwarded-For", "10.1.2.3:4000", "", "198.51.100.9", proxies, "198.51.100.9"},
		{"garbage hop: the peer", "10.1.2.3:4000", "1.1.1.1, nonsense", "", proxies, "10.1.2.3"},
		{"all hops trusted: the peer", "10.1.2.3:4000", "10.0.0.1", "", proxies, "10.1.2.3"},
		{"IPv6 trusted peer", "[2001:db8::1]:4000", "2001:db9::5", "", proxies, "2001:db9::5"},
		{"IPv4-mapped peer", "[::ffff:10.1.2.3]:4000", "198.51.100.1", "", proxies, "198.51.100.1"},
		{"no address", "", "198.51.100.1", "", proxies, ""},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = tc.remote
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if tc.xri != "" {
			r.Header.Set("X-Real-IP", tc.xri)
		}
		if got := ClientIP(r, tc.trusted); got != tc.want {
			t.Errorf("%s: ClientIP = %q, want %q", tc.name, got, tc.want)
		}
	}
	if _, err := ParsePrefixes([]string{"10.0.0.0/33"}); err == nil {
		t.Error("ParsePrefixes accepted 10.0.0.0/33")
	}
	if _, err := ParsePrefixes([]string{"proxy.example"}); err == nil {
		t.Error("ParsePrefixes accepted a host name")
	}
}

// TestEventRateLimiter_forwardedFor publishes through a real khatru relay
// from one client (127.0.0.1) that sends a different X-Forwarded-For on
// each connection. Untrusted, the header changes nothing: the burst is
// the client's, whatever it claims. With 127.0.0.0/8 trusted (a proxy on
// loopback), each forwarded client has its own bucket.
func TestEventRateLimiter_forwardedFor(t *testing.T) {
	const burst = 3
	loopback := netip.MustParsePrefix("127.0.0.0/8")
	for _, tc := range []struct {
		name    string
		trusted []netip.Prefix
		want    int // accepted of 2×burst events over two connections
	}{
		{"untrusted peer", nil, burst},
		{"trusted proxy", []netip.Prefix{loopback}, 2 * burst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rl := khatru.NewRelay()
			frozen := time.Unix(1_700_000_000, 0)
			rl.RejectEvent = append(rl.RejectEvent, EventRateLimiter(1, burst, func() time.Time { return frozen }, tc.trusted...))
			rl.StoreEvent = append(rl.StoreEvent, func(context.Context, *nostr.Event) error { return nil })
			srv := httptest.NewServer(rl)
			defer srv.Close()
			url := "ws" + strings.TrimPrefix(srv.URL, "http")
			accepted := 0
			for _, claimed := range []string{"198.51.100.1", "198.51.100.2"} {
				accepted += publishAll(t, url, claimed, burst)
			}
			if accepted != tc.want {
				t.Errorf("accepted %d events, want %d", accepted, tc.want)
			}
		})
	}
}

// publishAll connects claiming to forward for claimed, publishes n
// events and returns how many the relay accepted.
func publishAll(t *testing.T, url, claimed string, n int) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := nostr.NewRelay(ctx, url, nostr.WithRequestHeader(http.Header{"X-Forwarded-For": {claimed}}))
	if err := r.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sk := nostr.GeneratePrivateKey()
	ok := 0
	for i := range n {
		evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: claimed + string(rune('a'+i))}
		if err := evt.Sign(sk); err != nil {
			t.Fatal(err)
		}
		if err := r.Publish(ctx, evt); err == nil {
			ok++
		} else if !strings.Contains(err.Error(), "rate-limited") {
			t.Fatalf("publish: %v", err)
		}
	}
	return ok
}
