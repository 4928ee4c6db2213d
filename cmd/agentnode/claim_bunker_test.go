package main

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip46"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// testBunker is a NIP-46 remote signer (go-nostr's StaticKeySigner) holding
// the owner's key and answering requests over a real relay.
type testBunker struct {
	signerPK string
	url      string // bunker://...
	mu       sync.Mutex
	methods  []string // requests seen, in order
}

// startBunker runs a remote signer for ownerSK listening on relayURL.
// refuseSigning makes it answer sign_event with "unauthorized".
func startBunker(t *testing.T, relayURL, ownerSK, secret string, refuseSigning bool) *testBunker {
	t.Helper()
	signerPK, _ := nostr.GetPublicKey(ownerSK) // a static signer answers as the key it holds
	b := &testBunker{signerPK: signerPK}
	signer := nip46.NewStaticKeySigner(ownerSK)
	authorized := map[string]bool{}
	signer.AuthorizeRequest = func(harmless bool, from, gotSecret string) bool {
		if gotSecret != "" { // connect
			authorized[from] = gotSecret == secret
			return authorized[from]
		}
		if !authorized[from] {
			return false
		}
		return harmless || !refuseSigning
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	conn, err := relayclient.Dial(ctx, relayURL, relayclient.Options{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := conn.Subscribe(ctx, nostr.Filters{{Kinds: []int{nostr.KindNostrConnect}, Tags: nostr.TagMap{"p": {signerPK}}}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); conn.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			var evt *nostr.Event
			select {
			case evt = <-sub.Events:
			case <-conn.Done():
				return
			case <-ctx.Done():
				return
			}
			req, _, resp, err := signer.HandleRequest(ctx, evt)
			if err != nil {
				continue
			}
			b.mu.Lock()
			b.methods = append(b.methods, req.Method)
			b.mu.Unlock()
			conn.Publish(ctx, &resp)
		}
	})
	awaitSubscribed(t, sub)
	b.url = "bunker://" + signerPK + "?relay=" + url.QueryEscape(relayURL) + "&secret=" + secret
	return b
}

// awaitSubscribed waits for EOSE: the relay has the subscription.
func awaitSubscribed(t *testing.T, sub *relayclient.Sub) {
	t.Helper()
	select {
	case <-sub.EOSE:
	case <-time.After(30 * time.Second):
		t.Fatal("no EOSE for the signer's subscription")
	}
}

func (b *testBunker) seen() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.methods)
}

func TestClaimAdd_Bunker(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	ownerKey := testkit.NewKey(t)
	ownerSK, ownerPK := ownerKey.SK, ownerKey.PK
	agent := testkit.NewKey(t).PK
	b := startBunker(t, n.URL, ownerSK, "s3cret", false)

	// the node side knows only the bunker URL, never the owner's key
	env := map[string]string{"AGENTNODE_RELAY": n.URL}
	r := cli(t, env, "claim", "add", npub(agent), "--bunker", b.url, "--json")
	if r.err != nil {
		t.Fatalf("claim add --bunker: %v\nstderr: %s", r.err, r.stderr)
	}
	evt := publishedEvent(t, r.stdout)
	if evt.PubKey != ownerPK || evt.Kind != events.KindOwnerClaims {
		t.Fatalf("published kind %d by %s, want 14199 by the owner %s", evt.Kind, evt.PubKey, ownerPK)
	}
	if got := tagValues(storedClaims(t, n, ownerPK), "p"); !slices.Equal(got, []string{agent}) {
		t.Fatalf("stored claims p = %v, want [agent]", got)
	}
	if m := b.seen(); !slices.Contains(m, "connect") || !slices.Contains(m, "sign_event") {
		t.Fatalf("the bunker saw %v, want connect and sign_event", m)
	}

	// the environment variable works too, and merges with the stored claims
	agent2 := testkit.NewKey(t).PK
	env["AGENTNODE_OWNER_BUNKER"] = b.url
	if r := cli(t, env, "claim", "add", agent2); r.err != nil {
		t.Fatalf("claim add with AGENTNODE_OWNER_BUNKER: %v\nstderr: %s", r.err, r.stderr)
	}
	if got := tagValues(storedClaims(t, n, ownerPK), "p"); !slices.Equal(got, []string{agent, agent2}) {
		t.Fatalf("stored claims p = %v, want [agent agent2]", got)
	}
}

func TestClaimAdd_BunkerErrors(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	ownerKey := testkit.NewKey(t)
	ownerSK, ownerPK := ownerKey.SK, ownerKey.PK
	agent := testkit.NewKey(t).PK
	env := map[string]string{"AGENTNODE_RELAY": n.URL}

	// refuses to sign
	b := startBunker(t, n.URL, ownerSK, "s3cret", true)
	r := cli(t, env, "claim", "add", agent, "--bunker", b.url)
	if r.err == nil || !strings.Contains(r.err.Error(), "refused sign_event") || exitCode(r.err) != 1 {
		t.Fatalf("refusing bunker: err = %v", r.err)
	}
	// a wrong secret is refused at connect
	wrong := strings.Replace(b.url, "s3cret", "nope", 1)
	if r := cli(t, env, "claim", "add", agent, "--bunker", wrong); r.err == nil || !strings.Contains(r.err.Error(), "refused connect") {
		t.Fatalf("wrong secret: err = %v", r.err)
	}
	if evts := n.query(t, nostr.Filter{Kinds: []int{events.KindOwnerClaims}, Authors: []string{ownerPK}}); len(evts) != 0 {
		t.Fatalf("a refused bunker still published %d claims", len(evts))
	}

	// unreachable
	dead := "bunker://" + ownerPK + "?relay=" + url.QueryEscape("ws://127.0.0.1:1")
	if r := cli(t, env, "claim", "add", agent, "--bunker", dead); r.err == nil || !strings.Contains(r.err.Error(), "unreachable") {
		t.Fatalf("unreachable bunker: err = %v", r.err)
	}
	// no signer on the relay: the node's relay takes ephemeral events in
	// process too (relay.OnEphemeral), so it never answers "mute"; the
	// request times out like an unanswered one
	absent := testkit.NewKey(t).PK
	gone := "bunker://" + absent + "?relay=" + url.QueryEscape(n.URL)
	if r := cli(t, env, "claim", "add", agent, "--bunker", gone, "--bunker-timeout", "1s"); r.err == nil || !strings.Contains(r.err.Error(), "did not answer") {
		t.Fatalf("absent bunker: err = %v", r.err)
	}
	// a signer that listens but never answers
	conn, err := relayclient.Dial(context.Background(), n.URL, relayclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sub, err := conn.Subscribe(context.Background(), nostr.Filters{{Kinds: []int{nostr.KindNostrConnect}, Tags: nostr.TagMap{"p": {absent}}}})
	if err != nil {
		t.Fatal(err)
	}
	awaitSubscribed(t, sub)
	if r := cli(t, env, "claim", "add", agent, "--bunker", gone, "--bunker-timeout", "1s"); r.err == nil || !strings.Contains(r.err.Error(), "did not answer") {
		t.Fatalf("silent bunker: err = %v", r.err)
	}

	// usage errors
	for _, args := range [][]string{
		{"--bunker", "https://example.com"},
		{"--bunker", "bunker://nothex?relay=wss://x"},
		{"--bunker", "bunker://" + ownerPK},
		{"--bunker", b.url, "--owner-key", ownerSK},
	} {
		if r := cli(t, env, append([]string{"claim", "add", agent}, args...)...); exitCodeOf(r.err) != 2 {
			t.Errorf("%v: err = %v, want a usage error", args, r.err)
		}
	}
}
