package hostile

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// verification is the part of GET /api/verify/{agent} the tests read.
type verification struct {
	Verified bool              `json:"verified"`
	Reason   string            `json:"reason"`
	Sources  map[string]string `json:"sources"`
}

func (n *node) verify(t *testing.T, agent string) verification {
	t.Helper()
	c := http.Client{Timeout: 20 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://%s/api/verify/%s", n.addr, agent))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v verification
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// signedBy publishes one event of sk to n.
func signedBy(t *testing.T, n *node, sk string, kind int, tags nostr.Tags, content string) *nostr.Event {
	t.Helper()
	evt, err := publish(n.client(t), sk, kind, tags, content, 10*time.Second)
	if err != nil {
		t.Fatalf("publish kind %d to %s: %v", kind, n.url, err)
	}
	return evt
}

func pubkey(sk string) string { pk, _ := nostr.GetPublicKey(sk); return pk }

// Issue 23: owner O has alice on node A and carol on node B; B runs
// --peer A; O's claims list both on both relays; alice's profile lives
// only on A. B used to answer "no agent profile (kind 0)"; now it looks
// the profile up on its peer, verifies alice and says where the profile
// came from.
func TestFederation_nodeVerifiesAnAgentKnownOnlyThroughItsPeer(t *testing.T) {
	a := launchNode(t, launch{})
	b := launchNode(t, launch{args: []string{"--peer", a.url}})
	owner, alice, carol := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	prof := signedBy(t, a, alice, 0, nostr.Tags{{"p", pubkey(owner)}}, `{"name":"alice"}`)
	signedBy(t, b, carol, 0, nostr.Tags{{"p", pubkey(owner)}}, `{"name":"carol"}`)
	claims := nostr.Tags{{"p", pubkey(alice)}, {"p", pubkey(carol)}}
	signedBy(t, a, owner, 14199, claims, "")
	signedBy(t, b, owner, 14199, claims, "")

	v := b.verify(t, pubkey(alice))
	if !v.Verified {
		t.Fatalf("B does not verify alice: %q", v.Reason)
	}
	if got := v.Sources[prof.ID]; nostr.NormalizeURL(got) != nostr.NormalizeURL(a.url) {
		t.Errorf("the profile's source is %q, want the peer %s", got, a.url)
	}
	if v := b.verify(t, pubkey(carol)); !v.Verified || v.Sources == nil {
		t.Errorf("carol, local: %+v", v)
	}
}

// The same through the agent's NIP-65 write relay H, which is not B's
// peer: B finds alice's relay list (kind 10002) on its peer A, then her
// profile on H.
func TestFederation_nodeVerifiesThroughTheAgentsNIP65Relay(t *testing.T) {
	a, h := launchNode(t, launch{}), launchNode(t, launch{})
	b := launchNode(t, launch{args: []string{"--peer", a.url}, config: allowPrivateRelays}) // H, its NIP-65 relay, is on 127.0.0.1
	owner, alice := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	signedBy(t, a, alice, 10002, nostr.Tags{{"r", h.url}}, "")
	prof := signedBy(t, h, alice, 0, nostr.Tags{{"p", pubkey(owner)}}, `{"name":"alice"}`)
	signedBy(t, b, owner, 14199, nostr.Tags{{"p", pubkey(alice)}}, "")

	v := b.verify(t, pubkey(alice))
	if !v.Verified {
		t.Fatalf("B does not verify alice: %q", v.Reason)
	}
	if got := v.Sources[prof.ID]; !strings.Contains(got, h.addr) {
		t.Errorf("the profile's source is %q, want H %s", got, h.url)
	}
}

// A stranger cannot make the node fetch unboundedly: 150 verifications of
// random keys, all at once, with B's peer a relay that never answers. The
// lookups they cause are capped (8 in flight, 60 queries per minute to one
// relay, 3 s each); every request is answered (from the local store when
// the budget is spent) and the peer sees a bounded number of connections.
func TestFederation_strangersLookupsAreBudgeted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan net.Conn, 1000)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	t.Cleanup(func() {
		for len(accepted) > 0 {
			(<-accepted).Close()
		}
	})
	b := launchNode(t, launch{args: []string{"--peer", "ws://" + ln.Addr().String()}})
	errs := make(chan error, 150)
	for range 150 {
		go func() {
			c := http.Client{Timeout: 30 * time.Second}
			resp, err := c.Get(fmt.Sprintf("http://%s/api/verify/%s", b.addr, pubkey(nostr.GeneratePrivateKey())))
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			errs <- err
		}()
	}
	for range 150 {
		if err := <-errs; err != nil {
			t.Fatalf("a verification failed: %v", err)
		}
	}
	// 60 lookups per minute to the peer, plus the peer syncer's own
	// (re)connection attempts.
	n := len(accepted)
	t.Logf("the peer was dialled %d times", n)
	if n > 75 {
		t.Errorf("the peer was dialled %d times for 150 stranger verifications; want at most 75", n)
	}
}
