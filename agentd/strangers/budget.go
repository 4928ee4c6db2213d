package strangers

import (
	"context"
	"sync"
	"sync/atomic"
)

// Verdict is what a message may cost.
type Verdict int

const (
	// Known: the sender is known to the agent; the budget does not apply.
	Known Verdict = iota
	// Allow: a stranger's message within the budget; a token was spent.
	Allow
	// Notify: the sender's own bucket just ran dry: send it one short
	// notice (no model call); later messages in the same dry spell Drop.
	Notify
	// Drop: over the budget: no model call, no reply.
	Drop
	// Refuse: the transport's sender policy (Gate.Admits) refuses the
	// stranger outright: no answer at all, and no token spent.
	Refuse
	verdicts
)

// String names v for logs and metrics.
func (v Verdict) String() string {
	return [...]string{"known", "allowed", "notified", "dropped", "refused"}[v]
}

// Budget admits strangers' messages. Safe for concurrent use.
type Budget struct {
	cfg Config

	mu      sync.Mutex
	senders *buckets // key: agent + " " + sender
	agents  *buckets
	global  bucket

	counts [verdicts]atomic.Int64
	dryBy  [3]atomic.Int64 // Drop and Notify by the bucket that was dry: sender, agent, global
}

// New returns a Budget for cfg; it starts nothing.
func New(cfg Config) *Budget {
	c := cfg.withDefaults()
	return &Budget{cfg: c, senders: newBuckets(c.PerSender, c.MaxEntries), agents: newBuckets(c.PerAgent, c.MaxEntries),
		global: *newBucket(c.Global, c.Now())}
}

// Admit decides what from's message to agent may cost, spending a token
// of each bucket when it is a stranger's (Config.Known) and admitted.
func (b *Budget) Admit(ctx context.Context, agent, from string) Verdict {
	return Gate{Budget: b, Known: b.cfg.Known}.Admit(ctx, agent, from)
}

// Gate is one transport's door to a shared Budget, with its own idea of
// who is known (a DM allowlist, a kind-25910 allowlist).
type Gate struct {
	Budget *Budget
	// Known reports whether from is known to agent; nil: nobody is.
	Known func(ctx context.Context, agent, from string) bool
	// Admits reports whether the transport's sender policy lets the
	// stranger from talk to agent at all; nil: it does. One it refuses
	// gets Refuse and spends no token.
	Admits func(ctx context.Context, agent, from string) bool
}

// Admit is Budget.Admit with g's Known and Admits.
func (g Gate) Admit(ctx context.Context, agent, from string) Verdict {
	var v Verdict
	switch {
	case g.Known != nil && g.Known(ctx, agent, from):
		v = Known
	case g.Admits != nil && !g.Admits(ctx, agent, from):
		v = Refuse
	default:
		v = g.Budget.take(agent, from)
	}
	g.Budget.counts[v].Add(1)
	return v
}

// take spends a token of the sender's, the agent's and the global bucket
// if all three have one.
func (b *Budget) take(agent, from string) Verdict {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.cfg.Now()
	key := agent + " " + from
	switch {
	case !b.senders.has(key, now):
		b.dryBy[0].Add(1)
		if s := b.senders.peek(key); !s.notified {
			s.notified = true
			return Notify
		}
		return Drop
	case !b.agents.has(agent, now):
		b.dryBy[1].Add(1)
		return Drop
	case !b.global.has(b.cfg.Global, now):
		b.dryBy[2].Add(1)
		return Drop
	}
	if !b.senders.spend(key, now) || !b.agents.spend(agent, now) {
		b.dryBy[0].Add(1) // the maps are at their cap: as good as dry
		return Drop
	}
	if !b.cfg.Global.off() {
		b.global.tokens--
	}
	return Allow
}

// Stats are a Budget's counts since New.
type Stats struct {
	Known, Allowed, Notified, Dropped, Refused int64
	// DrySender, DryAgent, DryGlobal: refusals (Notify or Drop) by the
	// bucket that had no token.
	DrySender, DryAgent, DryGlobal int64
}

// Stats returns the counts so far.
func (b *Budget) Stats() Stats {
	return Stats{Known: b.counts[Known].Load(), Allowed: b.counts[Allow].Load(), Notified: b.counts[Notify].Load(),
		Dropped: b.counts[Drop].Load(), Refused: b.counts[Refuse].Load(), DrySender: b.dryBy[0].Load(), DryAgent: b.dryBy[1].Load(), DryGlobal: b.dryBy[2].Load()}
}
