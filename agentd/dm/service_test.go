package dm_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/nbd-wtf/go-nostr/nip59"
)

func TestService_answersDM(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	n.start(n.config())
	alice := n.person()

	sent := alice.send(agent.pk, "hello agent")
	got := alice.replyTo(sent.ID)

	if got.Content != "echo: hello agent" {
		t.Errorf("reply content %q, want the Responder's answer", got.Content)
	}
	if got.PubKey != agent.pk || got.Kind != 14 {
		t.Errorf("reply by %s kind %d, want kind 14 by the agent %s", got.PubKey, got.Kind, agent.pk)
	}
	if p := tagValue(got, "p"); p != alice.pk {
		t.Errorf("reply p tag %q, want the sender %s", p, alice.pk)
	}
	if want := []call{{agent.pk, alice.pk, "hello agent"}}; !slices.Equal(n.resp.calls, want) {
		t.Errorf("Responder calls %+v, want %+v", n.resp.calls, want)
	}
	// The agent's own copy is published right after the sender's.
	selfCopy := waitFor(t, "the agent's own copy", func() []nostr.Event { return agentCopies(t, n, agent) })
	if len(selfCopy) != 1 || selfCopy[0].ID != got.ID {
		t.Errorf("agent's own copies %+v, want exactly the reply %s", selfCopy, got.ID)
	}
}

// waitFor polls get until it returns something, or fails after deadline.
func waitFor[T any](t *testing.T, what string, get func() []T) []T {
	t.Helper()
	var got []T
	testkit.WaitFor(t, deadline, what, func() bool { got = get(); return len(got) > 0 })
	return got
}

// agentCopies unwraps the wraps to agent that the agent wrote itself.
func agentCopies(t *testing.T, n *node, agent party) []nostr.Event {
	t.Helper()
	wraps, err := n.relay.QuerySync(context.Background(), nostr.Filter{Kinds: []int{1059}, Tags: nostr.TagMap{"p": {agent.pk}}})
	if err != nil {
		t.Fatal(err)
	}
	var out []nostr.Event
	for _, w := range wraps {
		msg, err := dm.Unwrap(w, agent.sk)
		if err != nil {
			t.Fatalf("unwrap %s with the agent's key: %v", w.ID, err)
		}
		if msg.Rumor.PubKey == agent.pk {
			out = append(out, msg.Rumor)
		}
	}
	return out
}

func TestService_publishesDMRelayList(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	n.start(n.config())
	stop := n.start(n.config()) // a second start publishes nothing new
	stop()
	got, err := n.relay.QuerySync(context.Background(), nostr.Filter{Kinds: []int{10050}, Authors: []string{agent.pk}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0].Tags, nostr.Tags{{"relay", n.url}}) {
		t.Fatalf("kind 10050 of the agent: %+v, want one naming %s", got, n.url)
	}
}

func TestService_ignoresForgedSeal(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	n.start(n.config())
	mallory := n.person()
	victim := newParty()

	// Mallory seals (signs) a rumor that claims to be by the victim.
	rumor := nostr.Event{Kind: 14, PubKey: victim.pk, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"p", agent.pk}}, Content: "forged"}
	rumor.ID = rumor.GetID()
	mallory.publish(forgedWrap(t, rumor, mallory.party, agent.pk))
	sent := mallory.send(agent.pk, "honest") // handled after the forgery (MaxConcurrent 1)
	mallory.replyTo(sent.ID)

	if got := n.resp.texts(); !slices.Equal(got, []string{"honest"}) {
		t.Errorf("Responder saw %q, want only the honest message", got)
	}
	replies, err := n.relay.QuerySync(context.Background(), nostr.Filter{Kinds: []int{1059}, Tags: nostr.TagMap{"p": {victim.pk}}})
	if err != nil || len(replies) != 0 {
		t.Errorf("wraps to the impersonated victim: %d (err %v), want none", len(replies), err)
	}
}

// forgedWrap seals rumor with signer's key (whatever rumor.PubKey says)
// and wraps it to recipient.
func forgedWrap(t *testing.T, rumor nostr.Event, signer party, recipient string) nostr.Event {
	t.Helper()
	key, err := nip44.GenerateConversationKey(recipient, signer.sk)
	if err != nil {
		t.Fatal(err)
	}
	wrap, err := nip59.GiftWrap(rumor, recipient,
		func(s string) (string, error) { return nip44.Encrypt(s, key) },
		func(e *nostr.Event) error { return e.Sign(signer.sk) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	return wrap
}

func TestUnwrap_impersonation(t *testing.T) {
	agent, mallory, victim := newParty(), newParty(), newParty()
	rumor := nostr.Event{Kind: 14, PubKey: victim.pk, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"p", agent.pk}}, Content: "forged"}
	wrap := forgedWrap(t, rumor, mallory, agent.pk)
	if _, err := dm.Unwrap(&wrap, agent.sk); !errors.Is(err, dm.ErrImpersonation) {
		t.Errorf("Unwrap forged: %v, want ErrImpersonation", err)
	}
	rumor.PubKey = mallory.pk
	wrap = forgedWrap(t, rumor, mallory, agent.pk)
	msg, err := dm.Unwrap(&wrap, agent.sk)
	if err != nil || msg.Rumor.PubKey != mallory.pk || msg.Rumor.Content != "forged" {
		t.Errorf("Unwrap honest: %+v, %v", msg, err)
	}
	if _, err := dm.Unwrap(&wrap, victim.sk); !errors.Is(err, dm.ErrBadSeal) {
		t.Errorf("Unwrap with the wrong key: %v, want ErrBadSeal", err)
	}
}

func TestService_restartDoesNotAnswerTwice(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	stop := n.start(n.config())
	bob := n.person()

	first := bob.send(agent.pk, "one")
	bob.replyTo(first.ID)
	stop()
	whileDown := bob.send(agent.pk, "two") // stored while the service is down

	n.start(n.config())
	bob.replyTo(whileDown.ID) // caught up at start
	last := bob.send(agent.pk, "three")
	bob.replyTo(last.ID) // queued after every caught-up wrap

	if got, want := n.resp.texts(), []string{"one", "two", "three"}; !slices.Equal(got, want) {
		t.Errorf("Responder saw %q, want %q: each DM exactly once", got, want)
	}
	if got := len(bob.inbox()); got != 3 {
		t.Errorf("bob holds %d replies, want 3", got)
	}
}

func TestService_ignoresDMToNonLocalPubkey(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	n.start(n.config())
	carol := n.person()
	stranger := newParty() // not an agent of this node

	toStranger := carol.send(stranger.pk, "are you there?")
	toAgent := carol.send(agent.pk, "hi")
	carol.replyTo(toAgent.ID)

	if got := n.resp.texts(); !slices.Equal(got, []string{"hi"}) {
		t.Errorf("Responder saw %q, want only the DM to the local agent", got)
	}
	for _, r := range carol.inbox() {
		if tagValue(r, "e") == toStranger.ID {
			t.Errorf("the DM to a non-local pubkey was answered: %+v", r)
		}
	}
}

func TestService_responderErrorGetsPoliteReply(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	n.resp.err = errors.New("no model configured")
	cfg := n.config()
	cfg.UnavailableText = "I cannot answer right now."
	n.start(cfg)
	dave := n.person()

	sent := dave.send(agent.pk, "help")
	if got := dave.replyTo(sent.ID); got.Content != "I cannot answer right now." {
		t.Errorf("reply %q, want the unavailable text", got.Content)
	}
}

func TestService_rateLimitsPerSender(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	cfg := n.config()
	cfg.RateLimit = dm.RateLimit{Burst: 1, Every: time.Hour}
	cfg.RateLimitedText = "slow down"
	n.start(cfg)
	erin, frank := n.person(), n.person()

	sent := []nostr.Event{erin.send(agent.pk, "1"), erin.send(agent.pk, "2"), erin.send(agent.pk, "3")}
	other := frank.send(agent.pk, "frank") // another sender has his own bucket
	frank.replyTo(other.ID)

	// The unwrappers work in parallel, so which of erin's three is taken
	// first is not fixed: one is answered, the next over the limit gets the
	// notice once, the last is dropped unanswered.
	var replies []string
	testkit.WaitFor(t, deadline, "erin's two replies", func() bool {
		replies = replies[:0]
		for _, r := range erin.inbox() {
			for _, m := range sent {
				if tagValue(r, "e") == m.ID {
					replies = append(replies, r.Content)
				}
			}
		}
		return len(replies) >= 2
	})
	slices.Sort(replies)
	echoed := n.resp.texts()
	if len(replies) != 2 || !strings.HasPrefix(replies[0], "echo: ") || replies[1] != "slow down" {
		t.Errorf("erin's replies %q, want one echo and one rate-limited notice (the third dropped)", replies)
	}
	if len(echoed) != 2 || !slices.Contains(echoed, "frank") || "echo: "+echoed[slices.Index(echoed, "frank")^1] != replies[0] {
		t.Errorf("Responder saw %q, want one of erin's (the one echoed) and frank's", echoed)
	}
}

func TestService_Run_configErrors(t *testing.T) {
	err := dm.New(dm.Config{}).Run(context.Background())
	if !errors.Is(err, dm.ErrConfig) {
		t.Errorf("Run with an empty config: %v, want ErrConfig", err)
	}
}

func TestService_Run_twice(t *testing.T) {
	n := newNode(t)
	svc := dm.New(n.config())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	<-svc.Ready()
	if err := svc.Run(ctx); !errors.Is(err, dm.ErrRunning) {
		t.Errorf("a second Run: %v, want ErrRunning", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after its stop: %v, want nil", err)
	}
}

func TestService_rateLimitRefills(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	clock := testkit.NewClock(time.Now())
	cfg := n.config()
	cfg.RateLimit = dm.RateLimit{Burst: 1, Every: time.Minute}
	cfg.RateLimitedText = "slow down"
	cfg.Now = clock.Now
	n.start(cfg)
	gina := n.person()

	gina.replyTo(gina.send(agent.pk, "1").ID)
	if got := gina.replyTo(gina.send(agent.pk, "2").ID).Content; got != "slow down" {
		t.Fatalf("second reply %q, want the rate-limited notice", got)
	}
	clock.Advance(time.Minute) // one token back
	if got := gina.replyTo(gina.send(agent.pk, "3").ID).Content; got != "echo: 3" {
		t.Errorf("reply after a refill %q, want the answer", got)
	}
	if got, want := n.resp.texts(), []string{"1", "3"}; !slices.Equal(got, want) {
		t.Errorf("Responder saw %q, want %q", got, want)
	}
}
