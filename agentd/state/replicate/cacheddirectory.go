package replicate

import (
	"context"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// CachedDirectory is a Directory that keeps another's answer per owner for
// a TTL: replicators consult it for every batch sent and event received.
// Invalidate drops every answer (an OnStored hook calls it for the events
// ChangesOwners names); an answer computed before an Invalidate is not
// cached after it (it may miss the profile or claims that caused it).
type CachedDirectory struct {
	next Directory
	ttl  time.Duration
	now  func() time.Time

	mu    sync.Mutex
	cache map[string]cachedAgents
	gen   uint64 // Invalidate calls so far
}

type cachedAgents struct {
	agents []string
	at     time.Time
}

var _ Directory = (*CachedDirectory)(nil)

// NewCachedDirectory caches next's answers for ttl; now is the clock (nil:
// time.Now).
func NewCachedDirectory(next Directory, ttl time.Duration, now func() time.Time) *CachedDirectory {
	if now == nil {
		now = time.Now
	}
	return &CachedDirectory{next: next, ttl: ttl, now: now, cache: map[string]cachedAgents{}}
}

// Agents returns owner's agents, from the cache while fresh.
func (d *CachedDirectory) Agents(ctx context.Context, owner string) ([]string, error) {
	d.mu.Lock()
	e, ok := d.cache[owner]
	gen := d.gen
	d.mu.Unlock()
	if ok && d.now().Sub(e.at) < d.ttl {
		return e.agents, nil
	}
	agents, err := d.next.Agents(ctx, owner)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	if d.gen == gen { // else an Invalidate came while next answered: the answer may be stale
		d.cache[owner] = cachedAgents{agents: agents, at: d.now()}
	}
	d.mu.Unlock()
	return agents, nil
}

// Invalidate drops every cached answer (it never blocks for long: an
// OnStored hook may call it).
func (d *CachedDirectory) Invalidate() {
	d.mu.Lock()
	clear(d.cache)
	d.gen++
	d.mu.Unlock()
}

// ChangesOwners reports whether evt may change whose agents an owner has:
// a profile (kind 0, the agent's side of the link) or owner claims (kind
// 14199, the owner's side).
func ChangesOwners(evt *nostr.Event) bool {
	return evt.Kind == events.KindProfile || evt.Kind == events.KindOwnerClaims
}
