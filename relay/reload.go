package relay

import (
	"context"
	"fmt"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay/policies"
)

// limitSet is the limits in force and the policies built on the ones that
// may change at run time (ReloadLimits); the hooks wired once (wire) read
// it at every call.
type limitSet struct {
	lim      Limits
	rate     rejectFunc // events per second per address
	size     rejectFunc // content, tags, tag values
	future   rejectFunc // created_at skew
	budget   func(context.Context, nostr.Filters) (bool, string)
	capLimit func(context.Context, *nostr.Filter)
}

// limitField is one limit: its config name, its value, and whether it
// may change at run time.
type limitField struct {
	name string
	get  func(Limits) any
	live bool
}

// limitFields are every Limits field. The live ones are the policies'
// (rebuilt by ReloadLimits); the others are read once by the store, the
// patched khatru's connections or the connection guard, and need a restart.
var limitFields = []limitField{
	{"events_per_second", func(l Limits) any { return l.EventsPerSecond }, true},
	{"events_burst", func(l Limits) any { return l.EventsBurst }, true},
	{"requests_per_second", func(l Limits) any { return l.RequestsPerSecond }, true},
	{"requests_burst", func(l Limits) any { return l.RequestsBurst }, true},
	{"max_content_bytes", func(l Limits) any { return l.MaxContentBytes }, true},
	{"max_event_tags", func(l Limits) any { return l.MaxEventTags }, true},
	{"max_tag_value_bytes", func(l Limits) any { return l.MaxTagValueBytes }, true},
	{"max_future_skew_seconds", func(l Limits) any { return l.MaxFutureSkew }, true},
	{"max_filters", func(l Limits) any { return l.MaxFilters }, true},
	{"max_filter_values", func(l Limits) any { return l.MaxFilterValues }, true},
	{"max_search_words", func(l Limits) any { return l.MaxSearchWords }, true},
	{"default_limit", func(l Limits) any { return l.DefaultLimit }, true},
	{"max_limit", func(l Limits) any { return l.MaxLimit }, true},
	{"max_message_bytes", func(l Limits) any { return l.MaxMessageBytes }, false},
	{"max_count", func(l Limits) any { return l.MaxCount }, false},
	{"count_timeout_seconds", func(l Limits) any { return l.CountTimeout }, false},
	{"max_subscriptions", func(l Limits) any { return l.MaxSubscriptions }, false},
	{"max_concurrent_queries", func(l Limits) any { return l.MaxConcurrentQueries }, false},
	{"max_concurrent_messages", func(l Limits) any { return l.MaxConcurrentMessages }, false},
	{"max_outbound_bytes", func(l Limits) any { return l.MaxOutboundBytes }, false},
	{"max_outbound_messages", func(l Limits) any { return l.MaxOutboundMessages }, false},
	{"write_timeout_seconds", func(l Limits) any { return l.WriteTimeout }, false},
	{"max_connections", func(l Limits) any { return l.MaxConnections }, false},
	{"max_connections_per_ip", func(l Limits) any { return l.MaxConnectionsPerIP }, false},
	{"memory_ceiling_mb", func(l Limits) any { return l.MemoryCeiling }, false},
}

// newLimitSet builds the policies of lim, keeping prev's rate limiters
// (and their buckets) when their settings did not change.
func (r *Relay) newLimitSet(lim Limits, prev *limitSet) *limitSet {
	s := &limitSet{lim: lim,
		size:     policies.RejectOversizedByKind(lim.MaxContentBytes, lim.MaxEventTags, policies.AgentTagValueLimits(lim.MaxTagValueBytes)),
		future:   policies.RejectFarFuture(lim.MaxFutureSkew, nostr.Now),
		capLimit: policies.CapLimit(lim.DefaultLimit, lim.MaxLimit),
	}
	if prev != nil && prev.lim.EventsPerSecond == lim.EventsPerSecond && prev.lim.EventsBurst == lim.EventsBurst {
		s.rate = prev.rate
	} else {
		s.rate = policies.EventRateLimiter(lim.EventsPerSecond, lim.EventsBurst, time.Now, r.cfg.TrustedProxies...)
	}
	b := policies.Budget{MaxFilters: lim.MaxFilters, MaxValues: lim.MaxFilterValues, MaxSearchWords: lim.MaxSearchWords,
		PerSecond: lim.RequestsPerSecond, Burst: lim.RequestsBurst}
	if prev != nil && budgetOf(prev.lim) == b {
		s.budget = prev.budget
	} else {
		s.budget = policies.RequestBudget(b, time.Now)
	}
	return s
}

func budgetOf(l Limits) policies.Budget {
	return policies.Budget{MaxFilters: l.MaxFilters, MaxValues: l.MaxFilterValues, MaxSearchWords: l.MaxSearchWords,
		PerSecond: l.RequestsPerSecond, Burst: l.RequestsBurst}
}

// limits are the limits in force.
func (r *Relay) limits() Limits { return r.live.Load().lim }

// ReloadLimits applies lim's run-time limits (zero fields take the
// defaults, as at Open) and reports, by config name, those that changed
// ("old -> new") and those that changed but need a restart (not applied:
// the relay keeps running with the old value).
func (r *Relay) ReloadLimits(lim Limits) (applied, restart []string) {
	lim = lim.withDefaults()
	prev := r.live.Load()
	next := prev.lim
	for _, f := range limitFields {
		was, now := f.get(prev.lim), f.get(lim)
		if was == now {
			continue
		}
		change := fmt.Sprintf("%s %v -> %v", f.name, was, now)
		if !f.live {
			restart = append(restart, change)
			continue
		}
		applied = append(applied, change)
	}
	copyLive(&next, lim)
	r.live.Store(r.newLimitSet(next, prev))
	return applied, restart
}

// copyLive copies the run-time limits of src into dst.
func copyLive(dst *Limits, src Limits) {
	dst.EventsPerSecond, dst.EventsBurst = src.EventsPerSecond, src.EventsBurst
	dst.RequestsPerSecond, dst.RequestsBurst = src.RequestsPerSecond, src.RequestsBurst
	dst.MaxContentBytes, dst.MaxEventTags, dst.MaxTagValueBytes = src.MaxContentBytes, src.MaxEventTags, src.MaxTagValueBytes
	dst.MaxFutureSkew = src.MaxFutureSkew
	dst.MaxFilters, dst.MaxFilterValues, dst.MaxSearchWords = src.MaxFilters, src.MaxFilterValues, src.MaxSearchWords
	dst.DefaultLimit, dst.MaxLimit = src.DefaultLimit, src.MaxLimit
}

// Hooks that read the limit set in force at every call.

func (r *Relay) liveRate(ctx context.Context, evt *nostr.Event) (bool, string) {
	return r.live.Load().rate(ctx, evt)
}

func (r *Relay) liveSize(ctx context.Context, evt *nostr.Event) (bool, string) {
	return r.live.Load().size(ctx, evt)
}

func (r *Relay) liveFuture(ctx context.Context, evt *nostr.Event) (bool, string) {
	return r.live.Load().future(ctx, evt)
}

func (r *Relay) liveBudget(ctx context.Context, fs nostr.Filters) (bool, string) {
	return r.live.Load().budget(ctx, fs)
}

func (r *Relay) liveCapLimit(ctx context.Context, f *nostr.Filter) {
	r.live.Load().capLimit(ctx, f)
}
