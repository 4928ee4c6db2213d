package relay

import (
	"context"
	"fmt"
	"reflect"
	"strings"
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

// ReloadLimits applies lim's run-time limits (the Limits fields tagged
// reload:"live"; zero fields take the defaults, as at Open) and reports,
// by config name (the json tag), those that changed ("old -> new") and
// those that changed but need a restart (not applied: the relay keeps
// running with the old value; they are read once by the store, the
// patched khatru's connections or the connection guard).
func (r *Relay) ReloadLimits(lim Limits) (applied, restart []string) {
	prev := r.live.Load()
	next := prev.lim
	was, now, dst := reflect.ValueOf(prev.lim), reflect.ValueOf(lim.withDefaults()), reflect.ValueOf(&next).Elem()
	for i := range was.NumField() {
		if was.Field(i).Equal(now.Field(i)) {
			continue
		}
		sf := was.Type().Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		change := fmt.Sprintf("%s %v -> %v", name, was.Field(i), now.Field(i))
		if sf.Tag.Get("reload") != "live" {
			restart = append(restart, change)
			continue
		}
		applied = append(applied, change)
		dst.Field(i).Set(now.Field(i))
	}
	r.live.Store(r.newLimitSet(next, prev))
	return applied, restart
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
