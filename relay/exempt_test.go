package relay

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/testkit"
)

// The pubkey allowlist lets an exempt pubkey (the node's own agent)
// publish, and the exemption predicate runs under the publishing
// connection's context: it ends when the connection does, so a keystore
// read behind it cannot outlive the request.
func TestRelay_exemptSeesTheRequestContext(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	agent, other := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	agentPK, _ := nostr.GetPublicKey(agent)
	otherPK, _ := nostr.GetPublicKey(other)
	if err := tr.manage.lists.update(func(st *listState) error {
		st.AllowedPubkeys = map[string]string{otherPK: "listed"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []context.Context
	tr.SetExempt(func(ctx context.Context, pubkey string) bool {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, ctx)
		return pubkey == agentPK
	})
	c := tr.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Publish(ctx, *signed(t, agent, 1, nil, "the node's agent")); err != nil {
		t.Fatalf("exempt agent refused: %v", err)
	}
	if err := c.Publish(ctx, *signed(t, nostr.GeneratePrivateKey(), 1, nil, "a stranger")); err == nil {
		t.Fatal("a pubkey neither listed nor exempt published")
	}
	mu.Lock()
	got := append([]context.Context(nil), seen...)
	mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("exemption asked %d times, want 2", len(got))
	}
	if got[0].Done() == nil || got[0].Err() != nil {
		t.Fatalf("exemption ctx is not the live request's (Done %v, Err %v)", got[0].Done(), got[0].Err())
	}
	c.Close()
	testkit.WaitFor(t, 30*time.Second, "the exemption's ctx to end with its connection", func() bool { return got[0].Err() != nil })
}
