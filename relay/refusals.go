package relay

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/nbd-wtf/go-nostr"
)

// refusalCounts counts the events the relay's policies refused, by NIP-01
// reason prefix (for /metrics).
type refusalCounts struct {
	mu sync.Mutex
	n  map[string]int64
}

// refusalPrefixes are the prefixes counted by name; any other is "other".
var refusalPrefixes = []string{"invalid", "blocked", "rate-limited", "restricted", "pow", "duplicate", "auth-required", "error"}

// rejectFunc is one of khatru's RejectEvent policies.
type rejectFunc = func(ctx context.Context, evt *nostr.Event) (reject bool, msg string)

// counted wraps each policy so that its refusals are counted.
func (c *refusalCounts) counted(fns ...rejectFunc) []rejectFunc {
	out := make([]rejectFunc, len(fns))
	for i, fn := range fns {
		out[i] = func(ctx context.Context, evt *nostr.Event) (bool, string) {
			reject, msg := fn(ctx, evt)
			if reject {
				c.add(msg)
			}
			return reject, msg
		}
	}
	return out
}

// add counts one refusal with message msg.
func (c *refusalCounts) add(msg string) {
	prefix, _, _ := strings.Cut(nostr.NormalizeOKMessage(msg, "blocked"), ":")
	if !slices.Contains(refusalPrefixes, prefix) {
		prefix = "other"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int64{}
	}
	c.n[prefix]++
}

// Refusals reports how many events the relay's policies refused since
// Open, by NIP-01 reason prefix ("invalid", "blocked", "rate-limited",
// ...; "other" for the rest). Events refused before the policies run (bad
// id or signature) are not counted.
func (r *Relay) Refusals() map[string]int64 {
	r.refused.mu.Lock()
	defer r.refused.mu.Unlock()
	return maps.Clone(r.refused.n)
}
