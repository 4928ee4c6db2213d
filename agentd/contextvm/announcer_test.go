package contextvm_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/contextvm"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// TestAnnouncer_announcesAndRetracts: every agent gets its CEP-6
// announcements on the relay; one gone since the last round gets them
// deleted (NIP-09) with the key it was announced with.
func TestAnnouncer_announcesAndRetracts(t *testing.T) {
	ctx := context.Background()
	rl, err := relay.Open(ctx, relay.Config{DataDir: t.TempDir(), Version: "test", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rl.Close(context.Background()) })
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	keys := map[string]string{alice.PK: alice.SK, bob.PK: bob.SK}
	var mu sync.Mutex
	agents := []string{alice.PK, bob.PK}
	a := contextvm.NewAnnouncer(contextvm.AnnouncerConfig{
		Agents:  func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(agents) },
		Keys:    func(_ context.Context, pk string) (string, bool) { sk, ok := keys[pk]; return sk, ok },
		Server:  func(context.Context, string) (*mcp.Server, error) { return echoServer(), nil },
		Info:    func(string) contextvm.ServerInfo { return contextvm.ServerInfo{Name: "echo agent"} },
		Relays:  func() []string { return []string{"ws://127.0.0.1:1"} },
		Publish: rl.Publish, Query: rl.QuerySync, Logger: testLogger(t)})
	stored := func(pk string, kind int) int {
		evts, err := rl.QuerySync(ctx, nostr.Filter{Kinds: []int{kind}, Authors: []string{pk}})
		if err != nil {
			t.Fatal(err)
		}
		return len(evts)
	}
	a.Announce(ctx)
	for _, pk := range []string{alice.PK, bob.PK} {
		for _, kind := range []int{contextvm.KindServerAnnouncement, contextvm.KindToolsList, contextvm.KindRelayList} {
			if n := stored(pk, kind); n != 1 {
				t.Fatalf("agent %s: %d events of kind %d stored; want 1", pk[:8], n, kind)
			}
		}
	}
	mu.Lock()
	agents = []string{alice.PK} // bob removed
	mu.Unlock()
	a.Announce(ctx)
	if n := stored(bob.PK, contextvm.KindServerAnnouncement) + stored(bob.PK, contextvm.KindToolsList); n != 0 {
		t.Fatalf("a removed agent still has %d announcements; want them deleted", n)
	}
	if n := stored(alice.PK, contextvm.KindServerAnnouncement); n != 1 {
		t.Fatalf("the remaining agent has %d server announcements; want 1", n)
	}
}
