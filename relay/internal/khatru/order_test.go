package khatru

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// TestReq_listenerBeforeTheNextMessage (PATCHES.md 19): a client that
// subscribes and then publishes on the same connection gets its own
// ephemeral event, even when checking the REQ takes a while (here a
// RejectFilter hook that is slow for it). When the whole REQ ran in its
// own goroutine, the EVENT sent after it was broadcast before the REQ's
// listener existed: the ephemeral answer of a ContextVM or NIP-46 server
// was lost the same way, and the stock ContextVM SDK timed out.
func TestReq_listenerBeforeTheNextMessage(t *testing.T) {
	rl := NewRelay()
	rl.RejectFilter = append(rl.RejectFilter, func(ctx context.Context, f nostr.Filter) (bool, string) {
		time.Sleep(100 * time.Millisecond) // widens the window the old order lost the event in
		return false, ""
	})
	c := dial(t, serve(t, rl))
	evt := &nostr.Event{Kind: 20001, CreatedAt: nostr.Now(), Content: "a request", Tags: nostr.Tags{}}
	if err := evt.Sign(nostr.GeneratePrivateKey()); err != nil {
		t.Fatal(err)
	}
	c.send("REQ", "answers", nostr.Filter{Kinds: []int{20001}})
	c.send("EVENT", evt)
	delivered := false
	for {
		frame := c.next()
		var label string
		json.Unmarshal(frame[0], &label)
		switch label {
		case "EVENT":
			var got nostr.Event
			if json.Unmarshal(frame[2], &got) == nil && got.ID == evt.ID {
				delivered = true
			}
		case "OK":
			// The relay writes an event to its listeners before its OK.
			if !delivered {
				t.Fatalf("OK for %s came without the event reaching the REQ sent before it", evt.ID)
			}
			return
		}
	}
}
