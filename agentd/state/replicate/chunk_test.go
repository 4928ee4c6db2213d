package replicate_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/state/replicate"
)

// bigText is n bytes of incompressible text (base64 of random bytes).
func bigText(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)[:n]
}

// An op too large for one event (a 300 KB body that does not compress)
// travels in chunks: pushed to the other agent's node, it arrives whole
// and byte-identical. Anti-entropy is off (digests also go out at a
// replicator's start, and a repair could race the push): only push can
// have carried it.
func TestChunks_LargeOpIsPushed(t *testing.T) {
	owner, a1, a2 := newKey(), newKey(), newKey()
	dir := replicate.StaticDirectory{owner.pk: {a1.pk, a2.pk}}
	tr := openRelay(t)
	a := startNode(t, nodeConfig{agent: a1, owner: owner, dir: dir, relays: []*testRelay{tr}, antiEntropy: -1})
	b := startNode(t, nodeConfig{agent: a2, owner: owner, dir: dir, relays: []*testRelay{tr}, antiEntropy: -1})
	ca, cb := caller(a1, owner, capTeam), caller(a2, owner, capTeam)
	body := bigText(300_000)
	if _, err := a.rt.Create(context.Background(), ca, teamURI, note(id1, "big", body)); err != nil {
		t.Fatal(err)
	}
	eventually(t, converge, "the large note on b", func() bool { return b.get(cb, teamURI, id1) == a.get(ca, teamURI, id1) })
	if obj := object(t, b.get(cb, teamURI, id1)); obj["body"] != body {
		t.Fatal("the body differs")
	}
}

// A replica that joins late gets a large op through repair, in chunks;
// afterwards further anti-entropy rounds repair nothing more (the digests
// agree: before chunks, the op was left out and the bucket was repaired
// at every round).
func TestChunks_LargeOpIsRepaired(t *testing.T) {
	owner, a1, a2 := newKey(), newKey(), newKey()
	dir := &mutableDir{m: map[string][]string{owner.pk: {a1.pk}}}
	tr := openRelay(t)
	const every = 100 * time.Millisecond
	a := startNode(t, nodeConfig{agent: a1, owner: owner, dir: dir, relays: []*testRelay{tr}, antiEntropy: every})
	ca, cb := caller(a1, owner, capTeam), caller(a2, owner, capTeam)
	if _, err := a.rt.Create(context.Background(), ca, teamURI, note(id1, "big", bigText(200_000))); err != nil {
		t.Fatal(err)
	}
	eventually(t, converge, "a's op pushed (to a1's readers only)", func() bool { return a.pushedNS("cap_team") })
	dir.set(owner.pk, a1.pk, a2.pk)
	b := startNode(t, nodeConfig{agent: a2, owner: owner, dir: dir, relays: []*testRelay{tr}, antiEntropy: every})
	eventually(t, converge, "the large note on the late node", func() bool { return b.get(cb, teamURI, id1) == a.get(ca, teamURI, id1) })
	if s := a.rep.Stats(); s.RepairEvents == 0 {
		t.Fatalf("nothing came through repair: %+v", s)
	}
	// Once both digests have been compared a few times, repairs stop.
	repairs := func() int64 { return a.rep.Stats().RepairEvents + b.rep.Stats().RepairEvents }
	rounds := func(k int64) {
		t.Helper()
		n := a.rep.Stats().DigestsReceived + b.rep.Stats().DigestsReceived + 2*k
		eventually(t, converge, "digest rounds", func() bool { return a.rep.Stats().DigestsReceived+b.rep.Stats().DigestsReceived >= n })
	}
	// A digest made before b had the note may still be compared late and
	// repaired once; what must come is a window of three rounds without
	// any repair (before chunks, every round repaired the note's bucket).
	deadline := time.Now().Add(converge)
	for {
		before := repairs()
		rounds(3)
		if repairs() == before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("repairs go on after the replicas agreed (%d events in the last three rounds)", repairs()-before)
		}
	}
}

// pushedNS reports whether every link's push watermark of namespace ns is
// at the end of the node's op log there.
func (n *node) pushedNS(ns string) bool {
	ctx := context.Background()
	envs, err := n.rt.Store().OpsSince(ctx, ns, 0, 10_000)
	if err != nil || len(envs) == 0 {
		return false
	}
	for _, l := range n.cfg.Links {
		v, _ := n.rt.Store().LoadSetting(ctx, "replicate:"+n.agent.pk+":push:"+l.Name+":"+ns)
		if v != fmt.Sprint(envs[len(envs)-1].Seq) {
			return false
		}
	}
	return true
}
