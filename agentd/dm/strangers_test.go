package dm_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/agentd/strangers"
	"github.com/agentnode/agentnode/internal/testkit"
)

// junk is n gift wraps to agent dated at that do not open, each signed by
// a fresh key.
func junk(t *testing.T, agent string, n int, at nostr.Timestamp) []*nostr.Event {
	t.Helper()
	out := make([]*nostr.Event, n)
	for i := range out {
		out[i] = testkit.JunkWrap(t, agent, "junk "+strconv.Itoa(i), at)
	}
	return out
}

// wrapAt seals rumor with sk and gift-wraps it to recipient, dated at.
func wrapAt(t *testing.T, rumor nostr.Event, sk, recipient string, at nostr.Timestamp) *nostr.Event {
	t.Helper()
	return testkit.GiftWrap(t, testkit.Seal(t, rumor, sk, recipient, at), recipient, at)
}

// store publishes evts to the node's relay in-process.
func (n *node) store(evts ...*nostr.Event) {
	n.t.Helper()
	for _, evt := range evts {
		if err := n.relay.Publish(context.Background(), evt); err != nil {
			n.t.Fatalf("publish: %v", err)
		}
	}
}

// Issue 25: the catch-up stopped on a full page of one second. A DM stored
// while the service was down lies behind 600 wraps of one newer second
// (more than a page): it is answered at the start.
func TestService_catchUpReadsPastAFullSecond(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	alice := n.person()
	now := nostr.Now()
	rumor := nostr.Event{Kind: 14, PubKey: alice.pk, CreatedAt: now, Tags: nostr.Tags{{"p", agent.pk}}, Content: "hello"}
	rumor.ID = rumor.GetID()
	n.store(wrapAt(t, rumor, alice.sk, agent.pk, now-120))
	n.store(junk(t, agent.pk, 600, now-60)...)
	n.start(n.config())
	alice.replyTo(rumor.ID)
}

// Junk wraps cost no ledger write and take no id in it; the owner's DM
// after them is answered.
func TestService_junkIsNotRecorded(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	alice := n.person()
	svc := n.startService(n.config())
	n.store(junk(t, agent.pk, 300, nostr.Now())...)
	sent := alice.send(agent.pk, "hello")
	alice.replyTo(sent.ID)
	testkit.WaitFor(t, deadline, "the junk to be counted", func() bool { return svc.Stats().Wraps["garbage"] == 300 })
	log, err := os.ReadFile(n.state[:len(n.state)-len(".json")] + ".log")
	if err != nil {
		t.Fatal(err)
	}
	if len(log) > 20_000 {
		t.Errorf("the ledger log holds %d bytes after 300 junk wraps and one DM", len(log))
	}
}

// gate is a strangers' budget where alice's key alone is known.
func gate(clock *testkit.Clock, known string) dm.Gate {
	return strangers.New(strangers.Config{Now: clock.Now,
		PerAgent: strangers.Rate{Burst: 2, Every: time.Hour},
		Known:    func(_ context.Context, _, from string) bool { return from == known }})
}

// Strangers beyond the budget cost no Responder call and get no reply; a
// known sender is answered all the same.
func TestService_strangersBudget(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	owner := n.person()
	cfg := n.config()
	cfg.Gate = gate(testkit.NewClock(time.Now()), owner.pk)
	svc := n.startService(cfg)
	for range 6 {
		p := n.person()
		p.send(agent.pk, "stranger")
	}
	testkit.WaitFor(t, deadline, "six strangers handled", func() bool {
		m := svc.Stats().Messages
		return m["answered"]+m["over_budget"] == 6
	})
	if got := len(n.resp.texts()); got != 2 {
		t.Fatalf("%d Responder calls for 6 strangers, the budget is 2", got)
	}
	sent := owner.send(agent.pk, "owner")
	owner.replyTo(sent.ID)
}

// A stranger whose own bucket runs dry is told once, without a Responder
// call; its later messages are dropped.
func TestService_strangerToldOnce(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	bob := n.person()
	cfg := n.config()
	cfg.Gate = strangers.New(strangers.Config{PerSender: strangers.Rate{Burst: 1, Every: time.Hour}})
	svc := n.startService(cfg)
	first := bob.send(agent.pk, "one")
	bob.replyTo(first.ID)
	second := bob.send(agent.pk, "two")
	if got := bob.replyTo(second.ID).Content; got != dm.DefaultOverBudgetText {
		t.Fatalf("the second message got %q, want the over-budget notice", got)
	}
	bob.send(agent.pk, "three")
	testkit.WaitFor(t, deadline, "the third message dropped", func() bool { return svc.Stats().Messages["over_budget"] == 1 })
	if got := n.resp.texts(); len(got) != 1 {
		t.Fatalf("Responder calls %q, want the first message only", got)
	}
}

// A stranger the sender policy refuses gets nothing — not even the
// over-budget notice — and costs no Responder call and no ledger write.
func TestService_policyRefusesStrangers(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	owner, bob := n.person(), n.person()
	cfg := n.config()
	cfg.Gate = strangers.Gate{Budget: strangers.New(strangers.Config{}),
		Known:  func(_ context.Context, _, from string) bool { return from == owner.pk },
		Admits: func(context.Context, string, string) bool { return false }}
	svc := n.startService(cfg)
	for range 5 {
		bob.send(agent.pk, "let me in")
	}
	testkit.WaitFor(t, deadline, "bob's messages refused", func() bool { return svc.Stats().Messages["refused"] == 5 })
	sent := owner.send(agent.pk, "hello")
	owner.replyTo(sent.ID)
	if got := n.resp.texts(); len(got) != 1 || len(bob.inbox()) != 0 {
		t.Fatalf("Responder calls %q, bob's inbox %d", got, len(bob.inbox()))
	}
}
