package hostile

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/nostrrpc"
	"github.com/agentnode/agentnode/internal/testkit"
)

// The strangers' budget's documented defaults (docs/DM.md, "Strangers"):
// per agent a burst of 20 messages from senders it does not know, then
// one a minute.
const (
	agentBurst = 20
	agentEvery = time.Minute
)

// budgetBound is the most messages the per-agent budget admits from the
// start of a test until now.
func budgetBound(start time.Time) int {
	return agentBurst + int(time.Since(start)/agentEvery) + 1
}

// Issue 21, item 8: 200 DMs from 200 fresh keys cost 200 model calls (a
// paid API bills each). Strangers go through the per-agent budget: the
// model is called at most the budget's times, the rest is dropped without
// a reply (counted in /metrics), and the owner is still answered.
func TestDM_strangersCostAtMostTheBudget(t *testing.T) {
	n := startDMNode(t, scriptedModel(t, nil))
	owner := reader(t, n.node, n.ownerSK)
	wrap, id := giftWrap(t, n.ownerSK, n.agent, "hello", nostr.Now())
	flood(t, n.node, []*nostr.Event{wrap}, 1)
	if !waitAnswered(t, owner, n.ownerSK, id, 30*time.Second) {
		t.Fatal("the owner's DM is not answered")
	}
	perDM := len(n.model.Requests())
	start := time.Now()

	const strangers = 200 // as in the issue
	var wraps []*nostr.Event
	for range strangers {
		w, _ := giftWrap(t, nostr.GeneratePrivateKey(), n.agent, "please answer, it costs you", nostr.Now())
		wraps = append(wraps, w)
	}
	flood(t, n.node, wraps, 2)
	most := func() int { return perDM * (1 + budgetBound(start)) }
	testkit.WaitFor(t, 60*time.Second, "every stranger's DM to be handled", func() bool {
		if got := len(n.model.Requests()); got > most() {
			t.Fatalf("%d model calls for %d stranger DMs, the budget allows at most %d", got-perDM, strangers, most()-perDM)
		}
		return n.metric(t, `agentnode_dm_messages_total{`) >= 1+strangers
	})
	got := len(n.model.Requests())
	if got > most() {
		t.Fatalf("%d model calls for %d stranger DMs, the budget allows at most %d", got-perDM, strangers, most()-perDM)
	}
	if over := n.metric(t, `agentnode_dm_messages_total{outcome="over_budget"}`); over < strangers-float64(budgetBound(start)) {
		t.Errorf("over_budget = %v, want at least %d", over, strangers-budgetBound(start))
	}
	t.Logf("%d stranger DMs: %d model calls (%d per DM)", strangers, got-perDM, perDM)

	wrap, id = giftWrap(t, n.ownerSK, n.agent, "still there?", nostr.Now())
	flood(t, n.node, []*nostr.Event{wrap}, 1)
	if !waitAnswered(t, owner, n.ownerSK, id, 30*time.Second) {
		t.Fatal("the owner is not answered once strangers spent the budget")
	}
}

// Issue 21, item 8: thousands of junk gift wraps to an agent, and a valid
// DM from its owner sent right after is answered at once — garbage is
// discarded cheaply and the owner's DM waits behind no queue of it (on
// main it waited for every junk wrap to rewrite dm/state.json).
// junkWraps is the garbage flood's size: twice the DM queue of main (4096).
const junkWraps = 8000

func TestDM_garbageFloodDoesNotDelayTheOwner(t *testing.T) {
	n := startDMNode(t, scriptedModel(t, nil))
	owner := reader(t, n.node, n.ownerSK)
	flood(t, n.node, garbage(t, n.agent, junkWraps, nostr.Now()), 4)

	wrap, id := giftWrap(t, n.ownerSK, n.agent, "are you there?", nostr.Now())
	sent := time.Now()
	flood(t, n.node, []*nostr.Event{wrap}, 1)
	if !waitAnswered(t, owner, n.ownerSK, id, 10*time.Second) {
		t.Fatalf("the owner's DM sent after %d junk wraps is not answered within 10 s", junkWraps)
	}
	t.Logf("the owner's DM after %d junk wraps answered in %v", junkWraps, time.Since(sent).Round(time.Millisecond))
	if !n.healthy() {
		t.Error("the node is not healthy after the flood")
	}
}

// Issue 21, item 8: kind-25910 calls from strangers (agent/message runs
// the agent's model) go through the same budget: at most the budget's
// model calls, the rest refused with a "rate-limited:" JSON-RPC error.
func TestA2A_strangersCostAtMostTheBudget(t *testing.T) {
	n := startDMNode(t, scriptedModel(t, nil))
	const strangers = 40
	keys := map[string]string{}
	var pks []string
	for range strangers {
		sk := nostr.GeneratePrivateKey()
		pk, _ := nostr.GetPublicKey(sk)
		keys[pk] = sk
		pks = append(pks, pk)
	}
	cl := nostrrpc.NewClient(nostrrpc.ClientConfig{Relays: []string{n.url},
		Keys: func(_ context.Context, pk string) (string, error) { return keys[pk], nil }})
	t.Cleanup(func() { cl.Close() })
	start := time.Now()
	params, _ := json.Marshal(map[string]any{"content": map[string]any{"type": "request",
		"payload": map[string]any{"messages": []any{map[string]any{"text": "hello"}}}}})

	var wg sync.WaitGroup
	var mu sync.Mutex
	var ok, limited int
	var other []string
	for _, pk := range pks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			_, err := cl.CallAgent(ctx, pk, n.agent, "agent/message", params)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case strings.Contains(err.Error(), "rate-limited:"):
				limited++
			default:
				other = append(other, err.Error())
			}
		})
	}
	wg.Wait()
	calls := len(n.model.Requests())
	t.Logf("%d stranger calls: %d answered, %d rate-limited, %d other errors; %d model calls", strangers, ok, limited, len(other), calls)
	if calls > budgetBound(start) {
		t.Fatalf("%d model calls for %d stranger 25910 calls, the budget allows at most %d", calls, strangers, budgetBound(start))
	}
	if limited == 0 || len(other) > 0 {
		t.Fatalf("want the calls past the budget refused with rate-limited:, got %d and other errors %q", limited, other)
	}
}

// Issue 21, item 8: each processed wrap rewrote the whole dm/state.json.
// The DM ledger only appends: after another DM is answered every ledger
// file is the same file (inode) and its old content a prefix of the new.
func TestDM_ledgerOnlyAppends(t *testing.T) {
	n := startDMNode(t, scriptedModel(t, nil))
	owner := reader(t, n.node, n.ownerSK)
	dir := filepath.Join(n.data, "dm")
	send := func(text string) {
		t.Helper()
		wrap, id := giftWrap(t, n.ownerSK, n.agent, text, nostr.Now())
		flood(t, n.node, []*nostr.Event{wrap}, 1)
		if !waitAnswered(t, owner, n.ownerSK, id, 30*time.Second) {
			t.Fatalf("DM %q not answered", text)
		}
	}
	send("one")
	testkit.WaitFor(t, 10*time.Second, "the first DM to be recorded", func() bool { return len(snapshot(t, dir)) > 0 })
	before := snapshot(t, dir)
	send("two")
	testkit.WaitFor(t, 10*time.Second, "the second DM to be recorded", func() bool { return changed(before, snapshot(t, dir)) })
	after := snapshot(t, dir)
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			t.Errorf("%s is gone", name)
		case a.ino != b.ino:
			t.Errorf("%s was rewritten (a new file replaced it) for one DM", name)
		case !strings.HasPrefix(a.content, b.content):
			t.Errorf("%s was rewritten in place, not appended to", name)
		}
	}
}

// fileState is what snapshot keeps of a file.
type fileState struct {
	ino     uint64
	content string
}

// snapshot reads the regular files of dir.
func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		out[e.Name()] = fileState{ino: info.Sys().(*syscall.Stat_t).Ino, content: string(b)}
	}
	return out
}

// changed reports whether a file of before differs in after, or a new one appeared.
func changed(before, after map[string]fileState) bool {
	if len(after) != len(before) {
		return true
	}
	for name, b := range before {
		if a := after[name]; a != b {
			return true
		}
	}
	return false
}

// Issue 25: the DM catch-up stopped on a full page of one second and left
// older DMs unread. A DM whose answer was cut short by a crash (the model
// was still thinking) lies behind 600 junk wraps of one second; after the
// restart it is answered.
func TestDM_catchUpReadsPastAFullSecond(t *testing.T) {
	gate := make(chan struct{})
	model := scriptedModel(t, gate)
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release) // before the model server closes (cleanups run last first)
	n := startDMNode(t, model)

	now := nostr.Now()
	wrap, id := giftWrap(t, n.ownerSK, n.agent, "answer me after the crash", now-120)
	flood(t, n.node, []*nostr.Event{wrap}, 1)
	testkit.WaitFor(t, 30*time.Second, "the model to be asked", func() bool { return len(model.Requests()) > 0 })
	flood(t, n.node, garbage(t, n.agent, 600, now-60), 2)
	n.cmd.Process.Kill() // a crash while the model thinks: nothing recorded for the DM
	<-n.exited
	release()

	again := launchNode(t, launch{data: n.data, config: dmConfig(model)})
	if !waitAnswered(t, reader(t, again, n.ownerSK), n.ownerSK, id, 30*time.Second) {
		t.Fatal("the DM behind a full second of junk wraps is not answered after the restart")
	}
}
