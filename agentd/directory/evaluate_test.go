package directory_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/nbd-wtf/go-nostr"
)

// ownedAgent publishes an agent whose owner link verifies both ways, plus a heartbeat.
func ownedAgent(t *testing.T, d *directory.Directory, env testEnv, name string) (agent, owner key) {
	t.Helper()
	agent, owner = testkit.NewKey(t), testkit.NewKey(t)
	botProfile(t, env.rel, agent, env.clk.Now(), name, owner.PK, "")
	claims(t, env.rel, owner, env.clk.Now(), agent.PK)
	beat(t, env.rel, agent, env.clk.Now(), directory.Status{})
	agentWhere(t, d, agent.PK, "owner verified", func(a directory.Agent) bool { return a.OwnerVerified && a.Available })
	return agent, owner
}

func TestEvaluate_TrustWeightedLatestPerEvaluator(t *testing.T) {
	env := newEnv(t)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	agent, owner := ownedAgent(t, d, env, "Reviewer")
	stranger := testkit.NewKey(t)
	ctx := context.Background()

	if _, err := d.Evaluate(ctx, owner.SK, agent.PK, 9, "thorough", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Evaluate(ctx, stranger.SK, agent.PK, 3, "slow", "task-7"); err != nil {
		t.Fatal(err)
	}
	// Owner (verified): weight 1; stranger: 0.5. (9·1 + 3·0.5) / 1.5 = 7, not the plain mean 6.
	got, _ := d.Get(agent.PK)
	if got.QualityScore != 7 || got.EvaluationCount != 2 {
		t.Errorf("score %v over %d reviews, want 7 over 2", got.QualityScore, got.EvaluationCount)
	}

	// The stranger reviews again: only their latest counts.
	env.clk.Advance(time.Second)
	second, err := d.Evaluate(ctx, stranger.SK, agent.PK, 6, "better now", "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = d.Get(agent.PK)
	if got.QualityScore != 8 || got.EvaluationCount != 2 { // (9 + 6·0.5) / 1.5
		t.Errorf("after a second review: score %v over %d, want 8 over 2", got.QualityScore, got.EvaluationCount)
	}
	m, _ := d.Metrics(agent.PK)
	if len(m.Reviews) != 2 || m.Reviews[0].EventID != second.ID || m.Reviews[0].Weight != 0.5 || m.Reviews[1].Weight != 1 {
		t.Errorf("metrics reviews = %+v", m.Reviews)
	}

	// Deleting one's own review retracts it.
	del := publish(t, env.rel, stranger, env.clk.Now(), nostr.Event{Kind: 5, Tags: nostr.Tags{{"e", second.ID}, {"k", "1985"}}})
	_ = del
	agentWhere(t, d, agent.PK, "deletion applied", func(a directory.Agent) bool { return a.EvaluationCount == 1 })
	if got, _ := d.Get(agent.PK); got.QualityScore != 9 {
		t.Errorf("after deletion: %v, want 9", got.QualityScore)
	}
}

func TestEvaluate_ReviewsFromTheRelayCountAfterRestart(t *testing.T) {
	env := newEnv(t)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	agent, owner := ownedAgent(t, d, env, "Reviewer")
	stranger := testkit.NewKey(t)
	// Reviews published straight to the relay, one evaluator twice (older one last).
	for _, r := range []struct {
		by    key
		score string
		at    time.Duration
	}{{owner, "10", 0}, {stranger, "4", 2 * time.Second}, {stranger, "0", time.Second}} {
		ev := (&events.Evaluation{Agent: agent.PK, Score: mustScore(t, r.score)}).Template()
		publish(t, env.rel, r.by, env.clk.Now().Add(r.at), ev)
	}
	agentWhere(t, d, agent.PK, "live reviews", func(a directory.Agent) bool { return a.EvaluationCount == 2 })
	// A fresh directory over the same relay loads the same answer.
	d2 := startDir(t, env.rel, env.clk, directory.Config{})
	for name, dir := range map[string]*directory.Directory{"live": d, "loaded": d2} {
		got, _ := dir.Get(agent.PK)
		if want := 8.0; got.QualityScore != want || got.EvaluationCount != 2 { // (10 + 4·0.5) / 1.5
			t.Errorf("%s: %v over %d, want %v over 2", name, got.QualityScore, got.EvaluationCount, want)
		}
	}
}

func TestEvaluate_CustomTrust(t *testing.T) {
	env := newEnv(t)
	trusted := testkit.NewKey(t)
	d := startDir(t, env.rel, env.clk, directory.Config{Trust: func(evaluator, _ string) float64 {
		if evaluator == trusted.PK {
			return 1
		}
		return math.NaN() // counts 0
	}})
	agent, owner := ownedAgent(t, d, env, "A")
	ctx := context.Background()
	for _, ev := range []struct {
		k     key
		score float64
	}{{trusted, 4}, {owner, 10}} {
		if _, err := d.Evaluate(ctx, ev.k.SK, agent.PK, ev.score, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := d.Get(agent.PK); got.QualityScore != 4 || got.EvaluationCount != 1 {
		t.Errorf("score %v over %d, want 4 over 1 (the owner has no trust here)", got.QualityScore, got.EvaluationCount)
	}
}

func TestEvaluate_Refusals(t *testing.T) {
	env := newEnv(t)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	agent, _ := ownedAgent(t, d, env, "A")
	ev := testkit.NewKey(t)
	ctx := context.Background()
	tests := []struct {
		name  string
		sk    string
		agent string
		score float64
		want  error
	}{
		{"score above 10", ev.SK, agent.PK, 10.5, directory.ErrBadEvaluation},
		{"negative score", ev.SK, agent.PK, -1, directory.ErrBadEvaluation},
		{"NaN score", ev.SK, agent.PK, math.NaN(), directory.ErrBadEvaluation},
		{"bad key", "nsec1nope", agent.PK, 5, directory.ErrBadEvaluation},
		{"bad agent", ev.SK, "bob", 5, directory.ErrBadEvaluation},
		{"unknown agent", ev.SK, testkit.NewKey(t).PK, 5, directory.ErrUnknownAgent},
		{"self review", agent.SK, agent.PK, 10, directory.ErrBadEvaluation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evt, err := d.Evaluate(ctx, tt.sk, tt.agent, tt.score, "", "")
			if !errors.Is(err, tt.want) || evt != nil {
				t.Errorf("Evaluate = %v, %v; want %v", evt, err, tt.want)
			}
		})
	}
	if got, _ := d.Get(agent.PK); got.EvaluationCount != 0 {
		t.Errorf("a refused evaluation counted: %+v", got)
	}
}

func mustScore(t *testing.T, s string) float64 {
	t.Helper()
	f, ok := events.ParseScore(s)
	if !ok {
		t.Fatalf("bad score %q", s)
	}
	return f
}
