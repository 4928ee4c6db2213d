package lookup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/events"
)

// ParsePointer reads what a user or a tag gives as a pointer: nevent1,
// note1, naddr1 and 64 hex through events.ParseRef, nprofile1 and npub1
// (the author's profile, kind 0) through events.ParsePubKey. The binary
// builds Pointers from parsed references directly; tests name events so.
func ParsePointer(s string) (Pointer, error) {
	if r, err := events.ParseRef(s); err == nil {
		return Pointer{ID: r.ID, Kind: r.Kind, Author: r.Author, Identifier: r.Identifier, Relays: r.Relays}, nil
	}
	pk, relays, err := events.ParsePubKeyHints(s)
	if err != nil {
		return Pointer{}, fmt.Errorf("%w: %v", ErrBadPointer, err)
	}
	return Pointer{Kind: 0, Author: pk, Relays: relays}, nil
}

func TestParsePointer(t *testing.T) {
	k := newKey()
	id := "0f" + k.pk[2:]
	nevent, _ := nip19.EncodeEvent(id, []string{"wss://h.example"}, k.pk)
	naddr, _ := nip19.EncodeEntity(k.pk, 30199, "memo", []string{"wss://p.example"})
	nprofile, _ := nip19.EncodeProfile(k.pk, []string{"wss://home.example"})
	note, _ := nip19.EncodeNote(id)
	npub, _ := nip19.EncodePublicKey(k.pk)
	for _, c := range []struct {
		in   string
		want Pointer
	}{
		{id, Pointer{ID: id}},
		{"nostr:" + nevent, Pointer{ID: id, Author: k.pk, Relays: []string{"wss://h.example"}}},
		{naddr, Pointer{Kind: 30199, Author: k.pk, Identifier: "memo", Relays: []string{"wss://p.example"}}},
		{nprofile, Pointer{Kind: 0, Author: k.pk, Relays: []string{"wss://home.example"}}},
		{note, Pointer{ID: id}},
		{npub, Pointer{Kind: 0, Author: k.pk}},
	} {
		got, err := ParsePointer(c.in)
		if err != nil || got.ID != c.want.ID || got.Kind != c.want.Kind || got.Author != c.want.Author ||
			got.Identifier != c.want.Identifier || len(got.Relays) != len(c.want.Relays) || (len(got.Relays) > 0 && got.Relays[0] != c.want.Relays[0]) {
			t.Errorf("ParsePointer(%.20s…) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "nsec1xyz", "hello", "npub1", "naddr1qqqqxqgpwyvqvv", "nostr:naddr1qqqqxqgpwyvqvv"} {
		if _, err := ParsePointer(bad); !errors.Is(err, ErrBadPointer) {
			t.Errorf("ParsePointer(%q): %v, want ErrBadPointer", bad, err)
		}
	}
}

// An nevent's relay (not a peer, not the author's relay list) is asked:
// the event is found there, stored, and its source is that relay.
func TestResolve_followsTheNeventsRelay(t *testing.T) {
	home, node := openRelay(t), openRelay(t)
	bob := newKey()
	lesson := bob.publish(t, home.Relay, 4129, nostr.Tags{{"title", "t"}, {"category", "c"}, {"e", bob.pk}}, "a lesson")
	s, _ := nip19.EncodeEvent(lesson.ID, []string{home.url}, bob.pk)
	p, err := ParsePointer(s)
	if err != nil {
		t.Fatal(err)
	}
	lk := New(Config{Local: node.Relay, Logger: quiet(), Network: allowLoopback})
	got, err := lk.Resolve(context.Background(), p)
	if err != nil || len(got) != 1 || got[0].ID != lesson.ID {
		t.Fatalf("Resolve: %v, %v", got, err)
	}
	if src := lk.Source(lesson.ID); src != home.url {
		t.Errorf("source %q, want %s", src, home.url)
	}
	if local, _ := node.QuerySync(context.Background(), nostr.Filter{IDs: []string{lesson.ID}}); len(local) != 1 {
		t.Error("the event found is not stored locally")
	}
	if _, err := lk.Resolve(context.Background(), Pointer{ID: "zz"}); !errors.Is(err, ErrBadPointer) {
		t.Errorf("a bad pointer: %v", err)
	}
}

// An "a" tag's relay hint in a stored event is remembered: a package
// (kind 30199) asked for by its address through the Querier — as the
// capability registry resolves an naddr — is found on that relay; an "e"
// tag's hint the same for a query by id.
func TestQuerier_followsETagAndATagHints(t *testing.T) {
	home, node := openRelay(t), openRelay(t)
	author, agent := newKey(), newKey()
	c := &events.Capability{Name: "memo", Version: "1.0.0", SchemaURI: "https://example.org/acp.json",
		Content: "metadata:\n  id: did:nuwa:cap:memo@1.0.0\n"}
	tmpl := c.Template()
	pkg := author.publish(t, home.Relay, tmpl.Kind, tmpl.Tags, tmpl.Content)
	other := author.publish(t, home.Relay, 1, nil, "referenced note")
	addr := "30199:" + author.pk + ":memo@1.0.0"
	agent.publish(t, node.Relay, 1, nostr.Tags{{"a", addr, home.url}, {"e", other.ID, home.url}}, "uses memo")
	lk := New(Config{Local: node.Relay, Logger: quiet(), Network: allowLoopback})
	q, ctx := lk.Querier(), context.Background()
	if _, err := q.QuerySync(ctx, nostr.Filter{Authors: []string{agent.pk}}); err != nil { // the hints are read here
		t.Fatal(err)
	}
	got, err := q.QuerySync(ctx, nostr.Filter{Kinds: []int{30199}, Authors: []string{author.pk}, Tags: nostr.TagMap{"d": {"memo@1.0.0"}}})
	if err != nil || len(got) != 1 || got[0].ID != pkg.ID {
		t.Fatalf("package by address: %v, %v", got, err)
	}
	got, err = q.QuerySync(ctx, nostr.Filter{IDs: []string{other.ID}})
	if err != nil || len(got) != 1 || got[0].ID != other.ID {
		t.Fatalf("event by id: %v, %v", got, err)
	}
	for _, id := range []string{pkg.ID, other.ID} {
		if src := lk.Source(id); src != home.url {
			t.Errorf("source of %s: %q, want the hinted %s", id[:8], src, home.url)
		}
	}
}

// A comment stored on the node whose root lesson lives elsewhere: the
// follower fetches the lesson from the comment's "E" hint.
func TestFollower_fetchesACommentsRootLesson(t *testing.T) {
	home, node := openRelay(t), openRelay(t)
	bob, carol := newKey(), newKey()
	def := bob.publish(t, home.Relay, 4199, nostr.Tags{{"title", "writer"}}, "")
	lesson := bob.publish(t, home.Relay, 4129, nostr.Tags{{"title", "t"}, {"category", "c"}, {"e", def.ID}}, "a lesson")
	lk := New(Config{Local: node.Relay, Logger: quiet(), Network: allowLoopback})
	f := lk.Follower()
	remove := node.OnStored(f.Notify)
	defer remove()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- f.Run(ctx) }()
	defer func() { cancel(); <-done }()

	carol.publish(t, node.Relay, 1111, nostr.Tags{{"E", lesson.ID, home.url, bob.pk}, {"K", "4129"}, {"P", bob.pk},
		{"e", lesson.ID, home.url, bob.pk}, {"k", "4129"}, {"p", bob.pk}}, "a comment")
	deadline := time.Now().Add(15 * time.Second)
	for {
		got, _ := node.QuerySync(context.Background(), nostr.Filter{IDs: []string{lesson.ID}})
		if len(got) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the comment's root lesson was not fetched within 15 s (found %d, dropped %d)", f.Found(), f.Dropped())
		}
		waitABit(ctx)
	}
	if f.Found() != 1 || lk.Source(lesson.ID) != home.url {
		t.Errorf("found %d, source %q", f.Found(), lk.Source(lesson.ID))
	}
}

// waitABit yields for a short while between polls of a condition.
func waitABit(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Millisecond):
	}
}

// A full queue drops instead of blocking the relay's store hook.
func TestFollower_notifyNeverBlocks(t *testing.T) {
	f := New(Config{Local: openRelay(t).Relay, Logger: quiet(), Network: allowLoopback}).Follower()
	c := &nostr.Event{Kind: 1111}
	for range followQueue + 5 {
		f.Notify(c)
	}
	f.Notify(&nostr.Event{Kind: 1}) // not a comment: ignored, not counted
	if f.Dropped() != 5 {
		t.Fatalf("dropped %d, want 5", f.Dropped())
	}
}

// GET /api/verify/<nprofile>: the nprofile's relay is asked for the
// agent's profile (the node has no peer and no hint of its own).
func TestQuerier_verifyByNprofileAsksItsRelays(t *testing.T) {
	home, node := openRelay(t), openRelay(t)
	owner, alice := newKey(), newKey()
	prof := alice.publish(t, home.Relay, 0, nostr.Tags{{"bot"}, {"p", owner.pk}}, `{"name":"alice"}`)
	owner.publish(t, node.Relay, 14199, nostr.Tags{{"p", alice.pk}}, "")
	lk := New(Config{Local: node.Relay, Logger: quiet(), Network: allowLoopback})
	node.SetVerifier(lk.Querier())
	nprofile, _ := nip19.EncodeProfile(alice.pk, []string{home.url})
	httpURL := "http" + strings.TrimPrefix(node.url, "ws")
	var v struct {
		Verified bool              `json:"verified"`
		Sources  map[string]string `json:"sources"`
	}
	for _, ref := range []string{alice.pk, nprofile} { // the bare key first: nothing to go on
		resp, err := http.Get(httpURL + "/api/verify/" + ref)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /api/verify: %d, %v", resp.StatusCode, err)
		}
		if ref == alice.pk && v.Verified {
			t.Fatal("verified without the nprofile's relay: the test is wrong")
		}
	}
	if !v.Verified || v.Sources[prof.ID] != home.url {
		t.Fatalf("by nprofile: verified %v, sources %v; want the profile from %s", v.Verified, v.Sources, home.url)
	}
}
