package strangers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/strangers"
	"github.com/agentnode/agentnode/internal/testkit"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// 200 messages from 200 fresh keys cost at most the agent's burst; the
// rest is dropped silently (no notice: a notice per fresh key would be
// an amplifier), and a minute later one more is admitted.
func TestBudget_Admit_freshKeysStopAtTheAgentBudget(t *testing.T) {
	clock := testkit.NewClock(t0)
	b := strangers.New(strangers.Config{Now: clock.Now})
	ctx := context.Background()
	got := map[strangers.Verdict]int{}
	for i := range 200 {
		got[b.Admit(ctx, "agent", fmt.Sprint("stranger", i))]++
	}
	if got[strangers.Allow] != strangers.DefaultPerAgent.Burst || got[strangers.Notify] != 0 {
		t.Fatalf("verdicts %v, want %d allowed and the rest dropped", got, strangers.DefaultPerAgent.Burst)
	}
	clock.Advance(strangers.DefaultPerAgent.Every)
	if v := b.Admit(ctx, "agent", "late"); v != strangers.Allow {
		t.Fatalf("after a minute: %v, want allowed", v)
	}
	if v := b.Admit(ctx, "other agent", "stranger0"); v != strangers.Allow {
		t.Fatalf("another agent's budget: %v, want allowed", v)
	}
	if s := b.Stats(); s.Allowed != 22 || s.Dropped != 180 || s.DryAgent != 180 {
		t.Fatalf("stats %+v", s)
	}
}

// One sender gets its burst, one notice, then silence until its bucket
// refills.
func TestBudget_Admit_perSender(t *testing.T) {
	clock := testkit.NewClock(t0)
	b := strangers.New(strangers.Config{Now: clock.Now})
	ctx := context.Background()
	var got []strangers.Verdict
	for range 6 {
		got = append(got, b.Admit(ctx, "agent", "s"))
	}
	want := []strangers.Verdict{strangers.Allow, strangers.Allow, strangers.Allow, strangers.Notify, strangers.Drop, strangers.Drop}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("verdicts %v, want %v", got, want)
	}
	clock.Advance(strangers.DefaultPerSender.Every)
	if v := b.Admit(ctx, "agent", "s"); v != strangers.Allow {
		t.Fatalf("after the refill: %v", v)
	}
	if v := b.Admit(ctx, "agent", "s"); v != strangers.Notify {
		t.Fatalf("dry again: %v, want a new notice", v)
	}
}

// The global bucket bounds all agents together.
func TestBudget_Admit_global(t *testing.T) {
	clock := testkit.NewClock(t0)
	b := strangers.New(strangers.Config{Now: clock.Now, Global: strangers.Rate{Burst: 5, Every: time.Minute}})
	allowed := 0
	for i := range 50 {
		if b.Admit(context.Background(), fmt.Sprint("agent", i), "s") == strangers.Allow {
			allowed++
		}
	}
	if allowed != 5 || b.Stats().DryGlobal != 45 {
		t.Fatalf("allowed %d, stats %+v", allowed, b.Stats())
	}
}

// Known senders skip the budget, even when it is spent.
func TestBudget_Admit_known(t *testing.T) {
	b := strangers.New(strangers.Config{PerAgent: strangers.Rate{Burst: 1, Every: time.Hour},
		Known: func(_ context.Context, agent, from string) bool { return from == "owner" }})
	ctx := context.Background()
	b.Admit(ctx, "agent", "x")
	for range 10 {
		if v := b.Admit(ctx, "agent", "owner"); v != strangers.Known {
			t.Fatalf("the owner: %v", v)
		}
	}
	if v := b.Admit(ctx, "agent", "y"); v != strangers.Drop {
		t.Fatalf("a stranger past the budget: %v", v)
	}
}

// A negative burst turns a bucket off.
func TestBudget_Admit_off(t *testing.T) {
	off := strangers.Rate{Burst: -1}
	b := strangers.New(strangers.Config{PerSender: off, PerAgent: off, Global: off})
	for range 1000 {
		if v := b.Admit(context.Background(), "agent", "s"); v != strangers.Allow {
			t.Fatalf("no limits: %v", v)
		}
	}
}

// The sender map never grows past MaxEntries: full buckets are forgotten,
// and when none is, a new sender is dropped rather than remembered.
func TestBudget_Admit_boundedMaps(t *testing.T) {
	clock := testkit.NewClock(t0)
	off := strangers.Rate{Burst: -1}
	b := strangers.New(strangers.Config{Now: clock.Now, PerAgent: off, Global: off, MaxEntries: 10})
	for i := range 10 {
		b.Admit(context.Background(), "agent", fmt.Sprint(i))
	}
	if v := b.Admit(context.Background(), "agent", "eleventh"); v != strangers.Drop {
		t.Fatalf("past the cap with no full bucket: %v, want dropped", v)
	}
	clock.Advance(strangers.DefaultPerSender.Every)
	if v := b.Admit(context.Background(), "agent", "eleventh"); v != strangers.Allow {
		t.Fatalf("once buckets refilled: %v, want allowed", v)
	}
}

func TestRate_Check(t *testing.T) {
	for _, r := range []strangers.Rate{{Burst: 3}, {Every: time.Second}} {
		if r.Check("x") == nil {
			t.Errorf("%+v: no error", r)
		}
	}
	for _, r := range []strangers.Rate{{}, {Burst: -1}, {Burst: 1, Every: time.Second}} {
		if err := r.Check("x"); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

// A stranger the transport's policy refuses gets Refuse and spends no
// token; the owner stays known.
func TestGate_Admit_policyRefuses(t *testing.T) {
	b := strangers.New(strangers.Config{PerAgent: strangers.Rate{Burst: 1, Every: time.Hour}})
	g := strangers.Gate{Budget: b,
		Known:  func(_ context.Context, _, from string) bool { return from == "owner" },
		Admits: func(_ context.Context, _, from string) bool { return from == "friend" }}
	ctx := context.Background()
	for range 3 {
		if v := g.Admit(ctx, "agent", "stranger"); v != strangers.Refuse {
			t.Fatalf("a refused stranger: %v", v)
		}
	}
	if v := g.Admit(ctx, "agent", "owner"); v != strangers.Known {
		t.Fatalf("the owner: %v", v)
	}
	if v := g.Admit(ctx, "agent", "friend"); v != strangers.Allow {
		t.Fatalf("an admitted stranger after refusals: %v, want the token still there", v)
	}
	if s := b.Stats(); s.Refused != 3 || s.Known != 1 || s.Allowed != 1 {
		t.Fatalf("stats %+v", s)
	}
}
