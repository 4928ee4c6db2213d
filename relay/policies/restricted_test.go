package policies

import (
	"context"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/relay/internal/khatru"
	"github.com/nbd-wtf/go-nostr"
)

var restricted = []int{4290, 1059}

func TestReadableBy(t *testing.T) {
	author, reader, other := "aa", "bb", "cc"
	addressed := &nostr.Event{Kind: 4290, PubKey: author, Tags: nostr.Tags{{"v", "private"}, {"p", reader}}}
	public := &nostr.Event{Kind: 4290, PubKey: author, Tags: nostr.Tags{{"v", "public"}}}
	unrestricted := &nostr.Event{Kind: 1, PubKey: author, Tags: nostr.Tags{{"p", reader}}}
	cases := []struct {
		name   string
		evt    *nostr.Event
		pubkey string
		want   bool
	}{
		{"reader", addressed, reader, true},
		{"author", addressed, author, true},
		{"stranger", addressed, other, false},
		{"unauthenticated", addressed, "", false},
		{"public to a stranger", public, other, true},
		{"public unauthenticated", public, "", true},
		{"other kinds", unrestricted, "", true},
		{"malformed p tag names nobody", &nostr.Event{Kind: 1059, PubKey: author, Tags: nostr.Tags{{"p"}}}, other, true},
	}
	for _, tc := range cases {
		if got := ReadableBy(restricted, tc.evt, tc.pubkey); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRestricted_PreventBroadcast(t *testing.T) {
	prevent := Restricted{Kinds: restricted}.PreventBroadcast()
	evt := &nostr.Event{Kind: 1059, PubKey: "aa", Tags: nostr.Tags{{"p", "bb"}}}
	if prevent(&khatru.WebSocket{AuthedPublicKey: "bb"}, nostr.Filter{}, evt) {
		t.Fatal("reader prevented")
	}
	for _, who := range []string{"", "cc"} {
		if !prevent(&khatru.WebSocket{AuthedPublicKey: who}, nostr.Filter{}, evt) {
			t.Fatalf("%q not prevented", who)
		}
	}
}

// Without a connection in the context (the node's own reads) nothing is
// hidden; a filter naming a restricted kind still needs AUTH.
func TestRestricted_InProcessIsTrusted(t *testing.T) {
	ctx := context.Background()
	rule := Restricted{Kinds: restricted}
	if reject, _ := rule.RequireAuth()(ctx, nostr.Filter{Kinds: []int{1}}); reject {
		t.Fatal("unrestricted kind refused")
	}
	reject, msg := rule.RequireAuth()(ctx, nostr.Filter{Kinds: []int{4290}})
	if !reject || !strings.HasPrefix(msg, "auth-required: kind 4290 ") {
		t.Fatalf("got %v %q", reject, msg)
	}
	evt := &nostr.Event{Kind: 4290, Tags: nostr.Tags{{"p", "bb"}}}
	query := func(context.Context, nostr.Filter) (chan *nostr.Event, error) {
		ch := make(chan *nostr.Event, 1)
		ch <- evt
		close(ch)
		return ch, nil
	}
	ch, err := rule.Hide(query)(ctx, nostr.Filter{})
	if err != nil || len(ch) != 1 {
		t.Fatalf("in-process query hid the event: %d, %v", len(ch), err)
	}
}

func TestOnlyKey(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   bool
	}{{nil, false}, {[]string{"k"}, true}, {[]string{"k", "k"}, true}, {[]string{"k", "x"}, false}} {
		if got := onlyKey(tc.values, "k"); got != tc.want {
			t.Errorf("%v: got %v", tc.values, got)
		}
	}
}
