package lookup

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay"
)

var _ relay.SourceQuerier = (*Querier)(nil)

// served is a relay on loopback.
type served struct {
	*relay.Relay
	url string
}

func openRelay(t *testing.T) served {
	t.Helper()
	r, err := relay.Open(context.Background(), relay.Config{DataDir: t.TempDir(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.Close(ctx)
	})
	return served{r, "ws" + strings.TrimPrefix(srv.URL, "http")}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// key is a test identity.
type key struct{ sk, pk string }

func newKey() key {
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	return key{sk, pk}
}

func (k key) publish(t *testing.T, to *relay.Relay, kind int, tags nostr.Tags, content string) *nostr.Event {
	t.Helper()
	evt := &nostr.Event{Kind: kind, Tags: tags, Content: content, CreatedAt: nostr.Now()}
	evt.Sign(k.sk)
	if err := to.Publish(context.Background(), evt); err != nil {
		t.Fatal(err)
	}
	return evt
}

// An agent whose profile lives only on a peer verifies on the node; the
// verdict says where the profile came from, and the profile is stored.
func TestQuerier_verifiesAnAgentKnownOnlyThroughAPeer(t *testing.T) {
	a, b := openRelay(t), openRelay(t)
	owner, alice := newKey(), newKey()
	prof := alice.publish(t, a.Relay, 0, nostr.Tags{{"p", owner.pk}}, `{"name":"alice"}`)
	for _, r := range []*relay.Relay{a.Relay, b.Relay} {
		claims := &nostr.Event{Kind: 14199, Tags: nostr.Tags{{"p", alice.pk}}, CreatedAt: nostr.Now()}
		claims.Sign(owner.sk)
		r.Publish(context.Background(), claims)
	}
	ctx := context.Background()
	if v, _ := relay.VerifyAgent(ctx, b.Relay, alice.pk); v.Verified {
		t.Fatal("verified on B before any lookup: the test is wrong")
	}
	lk := New(Config{Local: b.Relay, Peers: func() []string { return []string{a.url} }, Logger: quiet()})
	v, err := relay.VerifyAgent(ctx, lk.Querier(), alice.pk)
	if err != nil || !v.Verified {
		t.Fatalf("verify through the lookup: %+v, %v", v.Ownership, err)
	}
	if got := v.Sources[prof.ID]; got != a.url {
		t.Errorf("the profile's source is %q, want the peer %s", got, a.url)
	}
	if got := v.Sources[v.Events.Claims.ID]; got != "local" {
		t.Errorf("the claims' source is %q, want local", got)
	}
	if v, _ := relay.VerifyAgent(ctx, b.Relay, alice.pk); !v.Verified {
		t.Error("the profile found was not stored: B alone still does not verify")
	}
}

// The same through the author's NIP-65 write relay, which is not a peer:
// the peer holds only the author's relay list.
func TestQuerier_findsAProfileOnTheAuthorsNIP65Relay(t *testing.T) {
	peer, home, node := openRelay(t), openRelay(t), openRelay(t)
	alice := newKey()
	alice.publish(t, peer.Relay, 10002, nostr.Tags{{"r", home.url}, {"r", "wss://read.example", "read"}}, "")
	prof := alice.publish(t, home.Relay, 0, nil, `{"name":"alice"}`)
	lk := New(Config{Local: node.Relay, Peers: func() []string { return []string{peer.url} }, Logger: quiet(), Network: allowLoopback})
	got, err := lk.Querier().QuerySync(context.Background(), nostr.Filter{Kinds: []int{0}, Authors: []string{alice.pk}})
	if err != nil || len(got) != 1 || got[0].ID != prof.ID {
		t.Fatalf("lookup: %v, %v", got, err)
	}
	if src := lk.Source(prof.ID); src != home.url {
		t.Errorf("source %q, want the NIP-65 relay %s", src, home.url)
	}
}

// "Not found" is remembered: the relays are not asked again until the
// negative cache expires.
func TestLookup_negativeCache(t *testing.T) {
	peer, node := openRelay(t), openRelay(t)
	bob := newKey()
	lk := New(Config{Local: node.Relay, Peers: func() []string { return []string{peer.url} }, Logger: quiet(), NegativeTTL: time.Minute})
	now := time.Now()
	lk.now = func() time.Time { return now }
	f := nostr.Filter{Kinds: []int{0}, Authors: []string{bob.pk}}
	if _, err := lk.Find(context.Background(), f, "", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("first lookup: %v", err)
	}
	bob.publish(t, peer.Relay, 0, nil, `{}`)
	if _, err := lk.Find(context.Background(), f, "", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("within the negative TTL: %v, want the cached ErrNotFound", err)
	}
	now = now.Add(2 * time.Minute)
	if got, err := lk.Find(context.Background(), f, "", nil); err != nil || len(got) != 1 {
		t.Fatalf("after the TTL: %v, %v", got, err)
	}
}

// A relay's budget is spent per query: beyond it, the relay is not asked.
func TestLookup_perRelayBudget(t *testing.T) {
	peer, node := openRelay(t), openRelay(t)
	lk := New(Config{Local: node.Relay, Peers: func() []string { return []string{peer.url} }, Logger: quiet(), PerRelayRate: 2})
	now := time.Now()
	lk.now = func() time.Time { return now }
	var keys []key
	for range 3 {
		k := newKey()
		k.publish(t, peer.Relay, 0, nil, `{}`)
		keys = append(keys, k)
	}
	for i, k := range keys {
		_, err := lk.Find(context.Background(), nostr.Filter{Kinds: []int{0}, Authors: []string{k.pk}}, "", nil)
		if (i < 2) != (err == nil) {
			t.Fatalf("lookup %d with a budget of 2 per minute: %v", i+1, err)
		}
	}
	now = now.Add(time.Minute)
	if _, err := lk.Find(context.Background(), nostr.Filter{Kinds: []int{0}, Authors: []string{keys[2].pk}}, "", nil); err != nil {
		t.Fatalf("a minute later: %v", err)
	}
}

// Lookups beyond MaxInflight do not wait: they answer ErrBusy at once.
func TestLookup_inflightBound(t *testing.T) {
	lk := New(Config{Local: openRelay(t).Relay, MaxInflight: 1, Logger: quiet()})
	lk.inflight <- struct{}{} // one lookup in flight
	if _, err := lk.Find(context.Background(), nostr.Filter{Kinds: []int{0}, Authors: []string{newKey().pk}}, "", nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("%v, want ErrBusy", err)
	}
}

// The owner's claims name where alice lives (["p", alice, <relay>]); the
// node has no peer, yet finds her profile there when it lists the owner's
// agents (the state directory's read).
func TestQuerier_followsTheClaimsRelayHints(t *testing.T) {
	home, node := openRelay(t), openRelay(t)
	owner, alice := newKey(), newKey()
	prof := alice.publish(t, home.Relay, 0, nostr.Tags{{"p", owner.pk}}, `{"name":"alice"}`)
	owner.publish(t, node.Relay, 14199, nostr.Tags{{"p", alice.pk, home.url}}, "")
	lk := New(Config{Local: node.Relay, Logger: quiet(), Network: allowLoopback})
	list, err := relay.OwnerAgents(context.Background(), lk.Querier(), owner.pk)
	if err != nil || len(list) != 1 || !list[0].Verified {
		t.Fatalf("owner's agents through the lookup: %+v, %v", list, err)
	}
	if got := list[0].Sources[prof.ID]; got != home.url {
		t.Errorf("the profile's source is %q, want the hinted relay %s", got, home.url)
	}
}
