package policies

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/agentnode/agentnode/relay/internal/khatru"
	"github.com/nbd-wtf/go-nostr"
)

// EventRateLimiter is a token bucket per client IP (ClientIP of the
// connection's request: X-Forwarded-For and X-Real-IP count only from a
// peer in trusted, and without trusted prefixes never): perSecond tokens
// refill every second up to burst. It starts no goroutine; buckets refill
// lazily and idle ones are pruned as the map grows. In-process publishes
// (no connection, no IP) are not limited. perSecond <= 0 disables the
// limit.
func EventRateLimiter(perSecond, burst int, now func() time.Time, trusted ...netip.Prefix) func(context.Context, *nostr.Event) (bool, string) {
	if perSecond <= 0 {
		return func(context.Context, *nostr.Event) (bool, string) { return false, "" }
	}
	b := &buckets{rate: float64(perSecond), burst: float64(burst), now: now, m: map[string]*bucket{}}
	return func(ctx context.Context, _ *nostr.Event) (reject bool, msg string) {
		ip := connIP(ctx, trusted)
		if ip == "" || b.take(ip) {
			return false, ""
		}
		return true, "rate-limited: slow down, please"
	}
}

// connIP is the client IP of ctx's connection ("" in process).
func connIP(ctx context.Context, trusted []netip.Prefix) string {
	conn := khatru.GetConnection(ctx)
	if conn == nil || conn.Request == nil {
		return ""
	}
	return ClientIP(conn.Request, trusted)
}

type bucket struct {
	tokens float64
	at     time.Time
}

type buckets struct {
	mu          sync.Mutex
	rate, burst float64
	now         func() time.Time
	m           map[string]*bucket
}

// take spends one token of key's bucket; false when it is empty.
func (b *buckets) take(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.now()
	k, ok := b.m[key]
	if !ok {
		b.prune(t)
		k = &bucket{tokens: b.burst, at: t}
		b.m[key] = k
	}
	k.tokens = min(b.burst, k.tokens+t.Sub(k.at).Seconds()*b.rate)
	k.at = t
	if k.tokens < 1 {
		return false
	}
	k.tokens--
	return true
}

// prune drops full buckets once the map is large; a full bucket holds no
// state worth keeping.
func (b *buckets) prune(t time.Time) {
	if len(b.m) < 4096 {
		return
	}
	for key, k := range b.m {
		if k.tokens+t.Sub(k.at).Seconds()*b.rate >= b.burst {
			delete(b.m, key)
		}
	}
}
