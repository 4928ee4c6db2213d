package hostile

import (
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/testkit"
)

// TestNIP86_AgentsUnderTheLists: on a node that stores agent-network
// kinds only and lets one pubkey publish, the node's own agent still
// publishes its profile, DM relay list and heartbeats (exempt), a
// stranger's DM to it (a gift wrap: one-time key) is answered, and the
// stranger's own kind-1 note is refused.
func TestNIP86_AgentsUnderTheLists(t *testing.T) {
	model := scriptedModel(t, nil)
	op, author := testkit.NewKey(t), testkit.NewKey(t)
	cfg := dmConfig(model)
	cfg["relay"] = map[string]any{"events_per_second": -1, "operators": []string{op.PK}, "agent_kinds_only": true}
	n := &dmNode{node: launchNode(t, launch{data: t.TempDir(), config: cfg}), model: model, ownerSK: nostr.GeneratePrivateKey()}
	mustManage(t, n.node, op.SK, "allowpubkey", author.PK, "publishes our definitions")
	owner, _ := nostr.GetPublicKey(n.ownerSK)
	var def struct{ ID string }
	cliJSON(t, &def, "def", "publish", "--relay", n.url, "--key", author.SK,
		"--title", "Listed Agent", "--instructions", "Answer people who write to you.", "--json")
	var res struct{ Agent struct{ PubKey string } }
	cliJSON(t, &res, "agent", "install", def.ID, "--owner", owner, "--node", "http://"+n.addr, "--data", n.data, "--json")
	n.agent = res.Agent.PubKey
	testkit.WaitFor(t, 30*time.Second, "the agent's profile, DM relay list and heartbeat", func() bool {
		for _, k := range []int{0, 10050, 30333} {
			if stored(t, n.node, nostr.Filter{Authors: []string{n.agent}, Kinds: []int{k}}) == 0 {
				return false
			}
		}
		return true
	})
	stranger := nostr.GeneratePrivateKey()
	wrap, id := giftWrap(t, stranger, n.agent, "hello from a stranger", nostr.Now())
	flood(t, n.node, []*nostr.Event{wrap}, 1)
	if !waitAnswered(t, reader(t, n.node, stranger), stranger, id, 30*time.Second) {
		t.Fatal("a stranger's DM to the agent is not answered under the lists")
	}
	refusedWith(t, n.node, stranger, 1, "blocked:")
}
