package main

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/lessons"
)

// servedNode is a real `agentnode serve` (relay + daemon, and peer sync
// when given --peer) on a loopback port.
type servedNode struct {
	*ServeCommand
	stop func()
}

func startServe(t *testing.T, args ...string) *servedNode {
	t.Helper()
	m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	c := &ServeCommand{m: m}
	base := []string{"--listen", "127.0.0.1:0", "--data", t.TempDir(), "--log-level", "error"}
	if err := c.ParseFlags(append(base, args...)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Open(ctx); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- c.Serve(ctx) }()
	n := &servedNode{ServeCommand: c}
	var once sync.Once
	n.stop = func() { // a test may stop the node before its cleanup does
		once.Do(func() {
			cancel()
			<-served
			cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer ccancel()
			if err := c.Close(cctx); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
	t.Cleanup(n.stop)
	return n
}

func (n *servedNode) publish(t *testing.T, sk string, tmpl nostr.Event) *nostr.Event {
	t.Helper()
	evt := signed(t, sk, tmpl)
	if err := n.relay.Publish(context.Background(), evt); err != nil {
		t.Fatalf("publish kind %d: %v", evt.Kind, err)
	}
	return evt
}

// lessonView waits until lesson id is in agent's effective behaviour on n
// and done holds for it (events reach a peer in any order: a lesson may be
// listed, refused, before the claims that admit it arrive).
func (n *servedNode) lessonView(t *testing.T, agent, id string, wait time.Duration, done func(lessons.LessonView) bool) (lessons.LessonView, bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		eff, err := n.Daemon().Effective(context.Background(), agent)
		if err != nil {
			t.Fatal(err)
		}
		var last lessons.LessonView
		found := false
		for _, l := range eff.Lessons {
			if l.ID == id {
				last, found = l, true
			}
		}
		if found && done(last) {
			return last, true
		}
		if time.Now().After(deadline) {
			return last, found
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServe_PeerLessonReachesEffectivePrompt is issue 3's two-node
// acceptance: node A follows node B with --peer. A lesson published on B by
// a verified sibling of A's agent (same definition, same owner, owner link
// verified both ways) reaches the effective prompt of A's agent; the same
// lesson text signed by a key whose owner link is not verified does not.
func TestServe_PeerLessonReachesEffectivePrompt(t *testing.T) {
	b := startServe(t)
	a := startServe(t, "--peer", "ws://"+b.Addr())
	ctx := context.Background()

	authorSK := testkit.NewKey(t).SK
	ownerKey := testkit.NewKey(t)
	ownerSK, owner := ownerKey.SK, ownerKey.PK
	siblingKey := testkit.NewKey(t)
	siblingSK, sibling := siblingKey.SK, siblingKey.PK
	strangerSK := testkit.NewKey(t).SK
	def := a.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: nostr.Tags{{"title", "Reviewer"}, {"role", "reviews code"}}})
	b.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: def.Tags}) // B knows the definition too (not required)

	inst, err := a.Daemon().Install(ctx, agentd.InstallRequest{Definition: def.ID, Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	agent := inst.Agent.PubKey
	// On B: the sibling's profile names the owner, the owner's claims list both agents.
	b.publish(t, siblingSK, nostr.Event{Kind: 0, Content: `{"name":"sib"}`, Tags: nostr.Tags{{"bot"}, {"e", def.ID}, {"p", owner}}})
	b.publish(t, ownerSK, nostr.Event{Kind: 14199, Tags: nostr.Tags{{"p", agent}, {"p", sibling}}})
	// The stranger claims the owner too, but the owner does not list it.
	b.publish(t, strangerSK, nostr.Event{Kind: 0, Content: `{"name":"x"}`, Tags: nostr.Tags{{"bot"}, {"e", def.ID}, {"p", owner}}})

	lessonTags := nostr.Tags{{"title", "wrap errors"}, {"category", "go"}, {"e", def.ID}}
	start := time.Now()
	good := b.publish(t, siblingSK, nostr.Event{Kind: 4129, Tags: lessonTags, Content: "wrap errors with %w"})
	bad := b.publish(t, strangerSK, nostr.Event{Kind: 4129, Tags: lessonTags, Content: "wrap errors with %w"})

	applied := func(l lessons.LessonView) bool { return l.Applied }
	view, ok := a.lessonView(t, agent, good.ID, 10*time.Second, applied)
	if !ok || !view.Applied || view.Rule != string(lessons.RuleSibling) {
		t.Fatalf("verified sibling's lesson on A: found %v, view %+v", ok, view)
	}
	t.Logf("lesson published on B reached A's effective prompt in %s", time.Since(start))
	// The claims that admitted the sibling are in: the stranger's refusal is final.
	listed := func(lessons.LessonView) bool { return true }
	if view, ok := a.lessonView(t, agent, bad.ID, 5*time.Second, listed); !ok || view.Applied {
		t.Fatalf("unverified key's lesson: found %v, view %+v (want listed and refused)", ok, view)
	} else {
		t.Logf("refused: %s", view.Reason)
	}
	eff, _ := a.Daemon().Effective(ctx, agent)
	if !strings.Contains(eff.Prompt, good.ID[:12]) {
		t.Fatal("the verified sibling's lesson is not in the prompt")
	}
	if strings.Contains(eff.Prompt, bad.ID[:12]) {
		t.Fatal("the unverified lesson reached the prompt")
	}
}
