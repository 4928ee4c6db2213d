package relay

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// The restricted-read rule (docs/RELAY.md): kinds 4290 and 1059 are served
// only to an authenticated author or "p" reader.

type party struct{ sk, pk string }

func newParty() party {
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	return party{sk, pk}
}

// closedReason subscribes with f and returns the CLOSED reason, or "" if
// the relay answered with EOSE instead.
func closedReason(t *testing.T, c *nostr.Relay, f nostr.Filter) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sub, err := c.Subscribe(ctx, nostr.Filters{f})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsub()
	for {
		select {
		case reason := <-sub.ClosedReason:
			return reason
		case <-sub.EndOfStoredEvents:
			return ""
		case <-sub.Events:
		case <-ctx.Done():
			t.Fatal("no EOSE or CLOSED")
		}
	}
}

// authenticate answers the relay's NIP-42 challenge, which khatru sends
// with the first auth-required refusal.
func authenticate(t *testing.T, c *nostr.Relay, p party) {
	t.Helper()
	if reason := closedReason(t, c, nostr.Filter{Kinds: []int{4290}, Limit: 1}); !strings.HasPrefix(reason, "auth-required: ") {
		t.Fatalf("CLOSED reason %q, want auth-required", reason)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Auth(ctx, func(evt *nostr.Event) error { return evt.Sign(p.sk) }); err != nil {
		t.Fatalf("AUTH: %v", err)
	}
}

// idSet is the sorted ids of evts.
func idSet(evts []*nostr.Event) []string {
	out := ids(evts)
	slices.Sort(out)
	return out
}

func sortedIDs(evts ...*nostr.Event) []string { return idSet(evts) }

// restrictedFixture stores, in-process: an op envelope from author to
// reader, one from author to other, a public one (no p) and a gift wrap to
// reader.
type restrictedFixture struct {
	author, reader, other, stranger party
	toReader, toOther, public, wrap *nostr.Event
}

func newRestrictedFixture(t *testing.T, tr *testRelay) *restrictedFixture {
	f := &restrictedFixture{author: newParty(), reader: newParty(), other: newParty(), stranger: newParty()}
	f.toReader = signed(t, f.author.sk, 4290, nostr.Tags{{"v", "private"}, {"p", f.reader.pk}}, "ciphertext-r")
	f.toOther = signed(t, f.author.sk, 4290, nostr.Tags{{"v", "shared"}, {"p", f.other.pk}}, "ciphertext-o")
	f.public = signed(t, f.author.sk, 4290, nostr.Tags{{"v", "public"}}, `[]`)
	f.wrap = signed(t, newParty().sk, 1059, nostr.Tags{{"p", f.reader.pk}}, "sealed")
	for _, evt := range []*nostr.Event{f.toReader, f.toOther, f.public, f.wrap} {
		if err := tr.Publish(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestRelay_RestrictedKindNeedsAuth(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	f := newRestrictedFixture(t, tr)
	c := tr.connect(t)
	for _, kinds := range [][]int{{4290}, {1059}, {1, 4290}} {
		reason := closedReason(t, c, nostr.Filter{Kinds: kinds})
		if !strings.HasPrefix(reason, "auth-required: ") {
			t.Fatalf("kinds %v: CLOSED reason %q, want auth-required", kinds, reason)
		}
	}
	// Without kinds the REQ is answered, with only the public event.
	got := queryWS(t, c, nostr.Filter{IDs: sortedIDs(f.toReader, f.toOther, f.public, f.wrap)})
	if want := sortedIDs(f.public); !slices.Equal(idSet(got), want) {
		t.Fatalf("unauthenticated by id: got %v, want %v", idSet(got), want)
	}
	if got := queryWS(t, c, nostr.Filter{Authors: []string{f.author.pk}}); !slices.Equal(idSet(got), sortedIDs(f.public)) {
		t.Fatalf("unauthenticated by author: got %d events", len(got))
	}
}

func TestRelay_RestrictedKindServedToItsReaders(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	f := newRestrictedFixture(t, tr)
	cases := []struct {
		name string
		who  party
		want []string
	}{
		{"reader", f.reader, sortedIDs(f.toReader, f.public, f.wrap)},
		{"other reader", f.other, sortedIDs(f.toOther, f.public)},
		{"author", f.author, sortedIDs(f.toReader, f.toOther, f.public)},
		{"stranger", f.stranger, sortedIDs(f.public)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tr.connect(t)
			authenticate(t, c, tc.who)
			got := queryWS(t, c, nostr.Filter{Kinds: []int{4290, 1059, 25910}})
			if !slices.Equal(idSet(got), tc.want) {
				t.Fatalf("got %v, want %v", idSet(got), tc.want)
			}
			// Asking for somebody else's events by p tag or id changes nothing.
			got = queryWS(t, c, nostr.Filter{Kinds: []int{4290}, Tags: nostr.TagMap{"p": {f.reader.pk, f.other.pk}}})
			for _, e := range got {
				if !slices.Contains(tc.want, e.ID) {
					t.Fatalf("served %s by #p", e.ID)
				}
			}
			got = queryWS(t, c, nostr.Filter{IDs: []string{f.toReader.ID, f.toOther.ID}})
			for _, e := range got {
				if !slices.Contains(tc.want, e.ID) {
					t.Fatalf("served %s by id", e.ID)
				}
			}
		})
	}
	// In-process reads are the node itself: everything.
	all, err := tr.QuerySync(context.Background(), nostr.Filter{Kinds: []int{4290, 1059, 25910}})
	if err != nil || len(all) != 4 {
		t.Fatalf("in-process: %d events, %v", len(all), err)
	}
}

func TestRelay_RestrictedKindLiveBroadcast(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	author, reader, stranger := newParty(), newParty(), newParty()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	live := func(c *nostr.Relay, f nostr.Filter) *nostr.Subscription {
		sub, err := c.Subscribe(ctx, nostr.Filters{f})
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
		return sub
	}
	cr, cs, cu := tr.connect(t), tr.connect(t), tr.connect(t)
	authenticate(t, cr, reader)
	authenticate(t, cs, stranger)
	subs := map[string]*nostr.Subscription{
		"reader":   live(cr, nostr.Filter{Kinds: []int{4290}}),
		"stranger": live(cs, nostr.Filter{Kinds: []int{4290}}),
		// limit 0 skips khatru's REQ checks: the broadcast hook must hold.
		"unauthenticated": live(cu, nostr.Filter{Kinds: []int{4290}, LimitZero: true}),
	}
	private := signed(t, author.sk, 4290, nostr.Tags{{"p", reader.pk}}, "ciphertext")
	if err := tr.Publish(ctx, private); err != nil {
		t.Fatal(err)
	}
	// A public event after it: a listener that gets the sentinel without
	// the private event never got the private one (one connection writes
	// in order).
	sentinel := signed(t, author.sk, 4290, nostr.Tags{{"v", "public"}}, "[]")
	if err := tr.Publish(ctx, sentinel); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"reader":          {private.ID, sentinel.ID},
		"stranger":        {sentinel.ID},
		"unauthenticated": {sentinel.ID},
	}
	for name, sub := range subs {
		var got []string
		for !slices.Contains(got, sentinel.ID) {
			select {
			case evt := <-sub.Events:
				got = append(got, evt.ID)
			case <-ctx.Done():
				t.Fatalf("%s: got %v, no sentinel", name, got)
			}
		}
		if !slices.Equal(got, want[name]) {
			t.Fatalf("%s: live events %v, want %v", name, got, want[name])
		}
	}
}

func TestRelay_RestrictedKindCount(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	f := newRestrictedFixture(t, tr)
	c := tr.connect(t)
	notices := make(chan string, 4)
	c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c = nostr.NewRelay(context.Background(), tr.URL, nostr.WithNoticeHandler(func(n string) { notices <- n }))
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, _, _ := c.Count(ctx, nostr.Filters{{Kinds: []int{4290}}})
	if n != 0 || !strings.HasPrefix(<-notices, "auth-required: ") {
		t.Fatalf("unauthenticated count %d", n)
	}
	authenticate(t, c, f.reader)
	n, _, _ = c.Count(ctx, nostr.Filters{{Kinds: []int{4290}}})
	if n != 0 || !strings.HasPrefix(<-notices, "restricted: ") {
		t.Fatalf("unconfined count %d", n)
	}
	n, _, err := c.Count(ctx, nostr.Filters{{Kinds: []int{4290}, Tags: nostr.TagMap{"p": {f.reader.pk}}}})
	if err != nil || n != 1 {
		t.Fatalf("confined count %d, %v; want 1", n, err)
	}
}

func TestRelay_RestrictedKindsConfigurable(t *testing.T) {
	r, err := Open(context.Background(), Config{DataDir: t.TempDir(), RestrictedKinds: []int{}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	if got := (Config{}).restrictedKinds(); !slices.Equal(got, []int{4290, 1059, 21059, 25910}) {
		t.Fatalf("default restricted kinds %v", got)
	}
	if got := r.cfg.restrictedKinds(); len(got) != 0 {
		t.Fatalf("explicitly empty: %v", got)
	}
}
