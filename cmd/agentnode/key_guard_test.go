package main

import (
	"strings"
	"testing"

	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// TestPublish_RefusesAPublicKeyAsKey: a hex public key that has published
// on the relay is refused as --key by def publish and lesson publish,
// naming it; a real key's publish report names the npub that signed.
func TestPublish_RefusesAPublicKeyAsKey(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	skKey := testkit.NewKey(t)
	sk, pk := skKey.SK, skKey.PK
	out := n.run(t, sk, "def", "publish", "--title", "Keyed")
	if want := "signed by " + npub(pk); !strings.Contains(out, want) {
		t.Errorf("def publish said %q, want %q", out, want)
	}
	def := publishedEvent(t, n.run(t, sk, "def", "publish", "--title", "Keyed 2", "--json"))
	for _, args := range [][]string{{"def", "publish", "--title", "Stolen"},
		{"lesson", "publish", "--definition", def.ID, "--title", "t", "--content", "c"}} {
		r := n.try(t, pk, args...)
		if r.err == nil || !strings.Contains(r.err.Error(), "is a public key ("+npub(pk)) {
			t.Errorf("%s with a public key as --key: %v", strings.Join(args[:2], " "), r.err)
		}
	}
}
