package replicate_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/replicate"
)

// mutableDir is a Directory the test changes while nodes run.
type mutableDir struct {
	mu sync.Mutex
	m  map[string][]string
}

func (d *mutableDir) Agents(_ context.Context, owner string) ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.m[owner]), nil
}

func (d *mutableDir) set(owner string, agents ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.m[owner] = agents
}

// An agent that joins after the owner's shared notes were created and
// edited — its key was in no batch's readers — reaches the full,
// byte-identical notes through anti-entropy, and never the first agent's
// private note; the joiner's own edits then flow back.
func TestAntiEntropy_LateJoinerCatchesUp(t *testing.T) {
	owner, a1, a2 := newKey(), newKey(), newKey()
	dir := &mutableDir{m: map[string][]string{owner.pk: {a1.pk}}}
	tr := openRelay(t)
	a := startNode(t, nodeConfig{agent: a1, owner: owner, dir: dir, relays: []*testRelay{tr}, antiEntropy: 100 * time.Millisecond})
	ca, cb := caller(a1, owner, capTeam), caller(a2, owner, capTeam)
	ctx := context.Background()
	ids := make([]string, 5)
	for i := range ids {
		ids[i] = fmt.Sprintf("11111111-1111-4111-8111-%012d", i)
		if _, err := a.rt.Create(ctx, ca, teamURI, note(ids[i], "draft", "Hello", "x")); err != nil {
			t.Fatal(err)
		}
		a.update(ca, teamURI, ids[i], `[{"op":"replace","path":"/title","value":"Hello again"},{"op":"add","path":"/tags/-","value":"y"}]`)
	}
	if _, err := a.rt.Create(ctx, caller(a1, owner, capNote), noteURI, note(id1, "secret", "a1 only")); err != nil {
		t.Fatal(err)
	}
	eventually(t, converge, "a's ops published", func() bool { return a.rep.Stats().Published >= 2 })

	dir.set(owner.pk, a1.pk, a2.pk)
	b := startNode(t, nodeConfig{agent: a2, owner: owner, dir: dir, relays: []*testRelay{tr}, antiEntropy: 100 * time.Millisecond})
	for _, id := range ids {
		eventually(t, converge, "note "+id+" identical on b", func() bool { return b.get(cb, teamURI, id) == a.get(ca, teamURI, id) })
	}
	if got := b.get(state.Caller{Owner: owner.pk, Agent: owner.pk, Verbs: state.AllVerbs}, noteURI, id1); got != "" {
		t.Fatalf("a1's private note reached a2's node: %s", got)
	}
	b.update(cb, teamURI, ids[0], `[{"op":"replace","path":"/title","value":"from b"}]`)
	eventually(t, converge, "b's edit on a", func() bool { return a.get(ca, teamURI, ids[0]) == b.get(cb, teamURI, ids[0]) })
	if s := a.rep.Stats(); s.RepairOps == 0 || s.DigestsReceived == 0 {
		t.Fatalf("a repaired nothing: %+v", s)
	}
}

// dropPublisher loses the op batches it is told to (it says it sent
// them): the relay never sees them and the pusher's watermark moves on.
type dropPublisher struct {
	inner replicate.Publisher
	drop  *atomic.Bool
}

func (p dropPublisher) Publish(ctx context.Context, evt *nostr.Event) error {
	if p.drop.Load() && evt.Tags.Find(replicate.TagASM) == nil {
		return nil
	}
	return p.inner.Publish(ctx, evt)
}

// Events lost on the way (the pusher believes they were sent and never
// resends them) are repaired by anti-entropy once digests flow.
func TestAntiEntropy_RepairsLostEvents(t *testing.T) {
	owner, agent := newKey(), newKey()
	dir := replicate.StaticDirectory{owner.pk: {agent.pk}}
	tr := openRelay(t)
	var lossy atomic.Bool
	lossy.Store(true)
	wrap := func(l replicate.Link) replicate.Link {
		l.Publisher = dropPublisher{inner: l.Publisher, drop: &lossy}
		return l
	}
	a := startNode(t, nodeConfig{agent: agent, owner: owner, dir: dir, relays: []*testRelay{tr}, wrap: wrap,
		antiEntropy: -1})
	c := caller(agent, owner, capNote)
	if _, err := a.rt.Create(context.Background(), c, noteURI, note(id1, "draft", "The quick fox.", "x")); err != nil {
		t.Fatal(err)
	}
	a.update(c, noteURI, id1, `[{"op":"replace","path":"/body","value":"The quick brown fox."}]`)
	eventually(t, converge, "a's pusher past the lost batches", a.pushedAll)
	lossy.Store(false)
	a.halt()
	a.cfg.AntiEntropyInterval = 100 * time.Millisecond
	a.start()
	b := startNode(t, nodeConfig{agent: agent, owner: owner, dir: dir, relays: []*testRelay{tr}, antiEntropy: 100 * time.Millisecond})
	eventually(t, converge, "b repaired", func() bool { return b.get(c, noteURI, id1) == a.get(c, noteURI, id1) })
}

// pushedAll reports whether every link's push watermark of cap_note is at
// the end of the node's op log.
func (n *node) pushedAll() bool {
	ctx := context.Background()
	envs, err := n.rt.Store().OpsSince(ctx, "cap_note", 0, 10_000)
	if err != nil || len(envs) == 0 {
		return false
	}
	for _, l := range n.cfg.Links {
		v, _ := n.rt.Store().LoadSetting(ctx, "replicate:"+n.agent.pk+":push:"+l.Name+":cap_note")
		if v != fmt.Sprint(envs[len(envs)-1].Seq) {
			return false
		}
	}
	return true
}
