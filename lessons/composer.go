package lessons

import (
	"context"
	"sync"
	"sync/atomic"
)

// Composer gathers, evaluates and composes agents' effective behaviour,
// skipping Evaluate and Compose when the inputs hash (Key) is unchanged
// since the last call for the same agent. It is safe for concurrent use; it
// starts no goroutines.
type Composer struct {
	q      Querier
	limits Limits

	mu     sync.Mutex
	policy *Policy
	cache  map[string]cached // by agent pubkey

	hits, misses atomic.Uint64
}

type cached struct {
	key string
	eff Effective
}

// CacheStats counts Effective calls answered from the cache and recomposed.
type CacheStats struct {
	Hits, Misses uint64
}

// NewComposer reads from q under policy p (nil: DefaultPolicy) with
// DefaultLimits.
func NewComposer(q Querier, p *Policy) *Composer {
	if p == nil {
		p = DefaultPolicy()
	}
	return &Composer{q: q, limits: DefaultLimits, policy: p, cache: map[string]cached{}}
}

// SetLimits changes the gather limits for later calls.
func (c *Composer) SetLimits(l Limits) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.limits = l.withDefaults()
}

// SetPolicy swaps the policy (a config reload; nil: DefaultPolicy). The
// policy is part of the key, so cached results recompose on the next call.
func (c *Composer) SetPolicy(p *Policy) {
	if p == nil {
		p = DefaultPolicy()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.policy = p
}

// Policy returns the policy in force.
func (c *Composer) Policy() *Policy {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.policy
}

// Effective gathers s's evidence and returns its effective behaviour,
// recomposing only when the inputs changed. The result is shared: do not
// modify it.
func (c *Composer) Effective(ctx context.Context, s Subject) (Effective, error) {
	c.mu.Lock()
	p, lim := c.policy, c.limits
	c.mu.Unlock()
	ev, err := GatherLimited(ctx, c.q, s, lim)
	if err != nil {
		return Effective{}, err
	}
	key := Key(s, ev, p)
	if eff, ok := c.lookup(s.Agent, key); ok {
		c.hits.Add(1)
		return eff, nil
	}
	c.misses.Add(1)
	eff := Compose(s.Definition, s.Nudges, p.Evaluate(s, ev))
	c.store(s.Agent, key, eff)
	return eff, nil
}

func (c *Composer) lookup(agent, key string) (Effective, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.cache[agent]
	return e.eff, ok && e.key == key
}

func (c *Composer) store(agent, key string, eff Effective) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cache[agent] = cached{key: key, eff: eff}
}

// Forget drops the cached result for agent (e.g. when it is removed).
func (c *Composer) Forget(agent string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.cache, agent)
}

// Stats reports cache hits and misses since the Composer was made.
func (c *Composer) Stats() CacheStats {
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load()}
}
