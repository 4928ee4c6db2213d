package relay

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// Addressed kinds (docs/RELAY.md, "Restricted kinds"): gift wraps and
// ContextVM messages are served without AUTH to a filter that names the
// recipient in #p, as stock ContextVM clients subscribe; a filter without
// #p still needs AUTH, and 4290 always does.
func TestRelay_AddressedKindsReadByRecipientFilter(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	f := newRestrictedFixture(t, tr)
	c := tr.connect(t)
	inbox := nostr.Filter{Kinds: []int{25910, 1059, 21059}, Tags: nostr.TagMap{"p": {f.reader.pk}}}
	if got := queryWS(t, c, inbox); !slices.Equal(idSet(got), sortedIDs(f.wrap)) {
		t.Fatalf("unauthenticated inbox: got %v, want the gift wrap", idSet(got))
	}
	for _, bad := range []nostr.Filter{
		{Kinds: []int{1059}},
		{Kinds: []int{4290}, Tags: nostr.TagMap{"p": {f.reader.pk}}},
		{Kinds: []int{1059, 4290}, Tags: nostr.TagMap{"p": {f.reader.pk}}},
	} {
		if reason := closedReason(t, c, bad); !strings.HasPrefix(reason, "auth-required: ") {
			t.Fatalf("%v: CLOSED reason %q, want auth-required", bad, reason)
		}
	}
	// A filter without kinds but with #p does not get 4290s addressed to it.
	if got := queryWS(t, c, nostr.Filter{Tags: nostr.TagMap{"p": {f.reader.pk}}}); !slices.Equal(idSet(got), sortedIDs(f.wrap)) {
		t.Fatalf("#p without kinds: got %v, want only the gift wrap", idSet(got))
	}
}

func TestRelay_AddressedKindsLive(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	reader, other, author := newParty(), newParty(), newParty()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := tr.connect(t)
	sub, err := c.Subscribe(ctx, nostr.Filters{{Kinds: []int{25910, 1059, 21059}, Tags: nostr.TagMap{"p": {reader.pk}}}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-sub.EndOfStoredEvents:
	case r := <-sub.ClosedReason:
		t.Fatalf("CLOSED %q", r)
	case <-ctx.Done():
		t.Fatal("no EOSE")
	}
	// An unauthenticated subscription with LimitZero and no #p gets none
	// (it is CLOSED auth-required, or if a relay let it through, the
	// broadcast rule holds).
	blind, err := tr.connect(t).Subscribe(ctx, nostr.Filters{{Kinds: []int{25910}, LimitZero: true}})
	if err != nil {
		t.Fatal(err)
	}
	// Subscribe returns once the REQ is sent: wait for the relay's answer
	// (EOSE, or a CLOSED kept for the check below) so that the events
	// published next are live for it.
	var blindClosed string
	select {
	case <-blind.EndOfStoredEvents:
	case blindClosed = <-blind.ClosedReason:
	case <-ctx.Done():
		t.Fatal("the blind subscription got neither EOSE nor CLOSED")
	}
	toOther := signed(t, author.sk, 25910, nostr.Tags{{"p", other.pk}}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	toReader := signed(t, author.sk, 25910, nostr.Tags{{"p", reader.pk}}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	for _, evt := range []*nostr.Event{toOther, toReader} {
		if err := tr.Publish(ctx, evt); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case evt := <-sub.Events:
		if evt.ID != toReader.ID {
			t.Fatalf("live: got %s, want the message to the reader", evt.ID)
		}
	case <-ctx.Done():
		t.Fatal("the reader's message never came")
	}
	// A public 25910 (no p) after them: one connection writes in order, so
	// the blind subscription's first event must be this one.
	sentinel := signed(t, author.sk, 25910, nil, `{"jsonrpc":"2.0","method":"notifications/public"}`)
	if err := tr.Publish(ctx, sentinel); err != nil {
		t.Fatal(err)
	}
	if blindClosed != "" {
		if !strings.HasPrefix(blindClosed, "auth-required: ") {
			t.Fatalf("the blind subscription was CLOSED %q, want auth-required", blindClosed)
		}
		return
	}
	select {
	case evt := <-blind.Events:
		if evt.ID != sentinel.ID {
			t.Fatalf("an unauthenticated subscription without #p got %s", evt.ID)
		}
	case reason := <-blind.ClosedReason: // the REQ checks hold for "limit": 0 too
		if !strings.HasPrefix(reason, "auth-required: ") {
			t.Fatalf("the blind subscription was CLOSED %q, want auth-required", reason)
		}
	case <-ctx.Done():
		t.Fatal("the blind subscription got neither the public sentinel nor CLOSED")
	}
}
