package agentd_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/internal/testkit"
)

// SecretKey and HasKey read the keystore under their caller's context: an
// installed agent's key is found, a stranger's is not, and a cancelled
// request does not read the key.
func TestDaemon_keyAccessorsTakeTheCallersContext(t *testing.T) {
	n := openNode(t, agentd.Config{})
	author, owner := testkit.NewKey(t), testkit.NewKey(t)
	def := n.definition(author, reviewer())
	agent := n.install(agentd.InstallRequest{Definition: def.ID, Owner: owner.PK}).Agent.PubKey
	ctx := context.Background()

	sk, err := n.d.SecretKey(ctx, agent)
	if err != nil {
		t.Fatal(err)
	}
	if pk, _ := nostr.GetPublicKey(sk); pk != agent {
		t.Fatalf("SecretKey(%s) is the key of %s", agent, pk)
	}
	if !n.d.HasKey(ctx, agent) || n.d.HasKey(ctx, owner.PK) {
		t.Fatalf("HasKey: agent %v, a stranger %v; want true, false", n.d.HasKey(ctx, agent), n.d.HasKey(ctx, owner.PK))
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := n.d.SecretKey(cancelled, agent); !errors.Is(err, context.Canceled) {
		t.Errorf("SecretKey under a cancelled ctx: %v, want context.Canceled", err)
	}
	if n.d.HasKey(cancelled, agent) {
		t.Error("HasKey under a cancelled ctx read the key")
	}
}
