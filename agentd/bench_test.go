package agentd_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

// BenchmarkDaemon_LessonToPrompt times a lesson's way from its arrival at
// the relay (Publish, which stores it and fires the daemon's hook) to the
// agent's updated prompt:
//
//   - background: until the daemon's own loop has recomposed (nobody asks);
//   - on-demand: Publish, then one Effective call (recomposes if the loop
//     has not yet).
//
// The definition already has `existing` lessons, half by the agent's owner
// (applied), half by strangers (refused). Reported: p50 and p90 of the
// whole way in ms, and p50 of Publish alone (store + fsync + hook).
//
//	go test -tags libsecp256k1 -run '^$' -bench LessonToPrompt -benchtime 50x ./agentd/
func BenchmarkDaemon_LessonToPrompt(b *testing.B) {
	for _, existing := range []int{0, 1000, 10_000} {
		if existing > 1000 && testing.Short() {
			continue
		}
		n := openNode(b, agentd.Config{})
		owner := testkit.NewKey(b)
		def := n.definition(testkit.NewKey(b), reviewer())
		a := n.install(agentd.InstallRequest{Definition: def.ID, Owner: owner.PK}).Agent
		preload(b, n, def.ID, owner, existing)
		n.effective(a.PubKey)
		for _, mode := range []string{"background", "on-demand"} {
			b.Run(fmt.Sprintf("lessons=%d/%s", existing, mode), func(b *testing.B) {
				lessonToPrompt(b, n, a.PubKey, def.ID, owner, mode)
			})
		}
	}
}

func lessonToPrompt(b *testing.B, n *node, agent, defID string, owner key, mode string) {
	ctx := context.Background()
	var took, stored []time.Duration
	for i := 0; b.Loop(); i++ {
		l := events.Lesson{DefinitionID: defID, Title: fmt.Sprintf("bench %d", i), Content: "Measured."}
		evt := l.Template()
		evt.CreatedAt = nostr.Now()
		evt.Sign(owner.SK)
		start := time.Now()
		if err := n.r.Publish(ctx, &evt); err != nil {
			b.Fatal(err)
		}
		stored = append(stored, time.Since(start))
		switch mode {
		case "background":
			for {
				if eff, ok := n.d.Ready(agent); ok && inPrompt(eff, evt.ID) {
					break
				}
				time.Sleep(50 * time.Microsecond)
			}
		case "on-demand":
			if !inPrompt(n.effective(agent), evt.ID) {
				b.Fatal("the lesson is not in the prompt")
			}
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	slices.Sort(stored)
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)*9/10]), "p90-ms")
	b.ReportMetric(ms(stored[len(stored)/2]), "publish-p50-ms")
}

// preload publishes count lessons on defID, half by owner, half by strangers.
func preload(b *testing.B, n *node, defID string, owner key, count int) {
	strangers := []key{testkit.NewKey(b), testkit.NewKey(b), testkit.NewKey(b)}
	for i := range count {
		sk := owner.SK
		if i%2 == 1 {
			sk = strangers[i%3].SK
		}
		n.lesson(sk, defID, fmt.Sprintf("preloaded %d", i), "Some lesson text that is neither short nor long.")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
