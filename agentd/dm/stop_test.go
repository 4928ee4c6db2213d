package dm_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/nbd-wtf/go-nostr"
)

// A stop can cut an answer short anywhere: while the Responder answers,
// while the reply to the sender or the agent's own copy is published
// (stored or not: the caller of a cut-short publish cannot tell), or
// after both are stored and before the bookkeeping. Whatever it cuts, the
// DM is answered exactly once across the restart.
func TestService_stopDuringAnswerAnswersOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		at     int  // the stop comes during: 0 the Responder, 1 the reply to the sender, 2 the agent's copy
		stored bool // the interrupted publish stores the event before the stop
		ok     bool // ... and reports success (the stop hits the bookkeeping)
	}{
		{name: "responder", at: 0},
		{name: "reply not stored", at: 1},
		{name: "reply stored, publish cut short", at: 1, stored: true},
		{name: "copy not stored", at: 2},
		{name: "copy stored, publish cut short", at: 2, stored: true},
		{name: "bookkeeping", at: 2, stored: true, ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t)
			agent := n.addAgent()
			interrupted := make(chan struct{})
			cfg := n.config()
			if tc.at == 0 {
				cfg.Responder = blockingResponder(interrupted)
			} else {
				cfg.Publish = interruptingPublish(n, tc.at, tc.stored, tc.ok, interrupted)
			}
			stop := n.start(cfg)
			bob := n.person()

			first := bob.send(agent.pk, "one")
			select {
			case <-interrupted:
			case <-time.After(deadline):
				t.Fatal("the answer to the first DM never reached the interruption point")
			}
			stop()
			n.start(n.config())
			bob.replyTo(first.ID)
			second := bob.send(agent.pk, "two")
			bob.replyTo(second.ID) // handled after anything left from the first

			if got := repliesTo(bob.inbox(), first.ID); len(got) != 1 {
				t.Errorf("bob holds %d replies to the first DM, want exactly 1", len(got))
			}
			if got := repliesTo(agentCopies(t, n, agent), first.ID); len(got) != 1 {
				t.Errorf("the agent holds %d copies of its reply to the first DM, want exactly 1", len(got))
			}
			if got, want := n.resp.texts(), []string{"one", "two"}; !slices.Equal(got, want) {
				t.Errorf("the recording Responder saw %q, want %q", got, want)
			}
		})
	}
}

// blockingResponder signals interrupted at its first call and answers
// only when its ctx ends (a stop), with the ctx's error.
func blockingResponder(interrupted chan<- struct{}) dm.Responder {
	return dm.ResponderFunc(func(ctx context.Context, _, _, _ string) (string, error) {
		close(interrupted)
		<-ctx.Done()
		return "", ctx.Err()
	})
}

// interruptingPublish publishes to n's relay, except the at-th gift wrap:
// that one is stored first if stored, then interrupted is signalled and
// the publish waits for its ctx to end (the test stops the service) and
// returns nil if ok, else the relay's error for a cut-short publish.
func interruptingPublish(n *node, at int, stored, ok bool, interrupted chan<- struct{}) func(context.Context, *nostr.Event) error {
	var wraps atomic.Int32
	return func(ctx context.Context, evt *nostr.Event) error {
		if evt.Kind != nostr.KindGiftWrap || int(wraps.Add(1)) != at {
			return n.relay.Publish(ctx, evt)
		}
		if stored {
			if err := n.relay.Publish(context.Background(), evt); err != nil {
				n.t.Errorf("publish %s: %v", evt.ID, err)
			}
		}
		close(interrupted)
		<-ctx.Done()
		if ok {
			return nil
		}
		return fmt.Errorf("error: event not stored: %w", ctx.Err())
	}
}

// repliesTo is the rumors among rs that reply (e tag) to id.
func repliesTo(rs []nostr.Event, id string) []nostr.Event {
	var out []nostr.Event
	for _, r := range rs {
		if tagValue(r, "e") == id {
			out = append(out, r)
		}
	}
	return out
}
