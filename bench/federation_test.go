package bench

import (
	"strings"
	"testing"
	"time"
)

// TestFederation_Smoke runs the federation bench at a small N (CI): every
// lesson reaches every other node.
func TestFederation_Smoke(t *testing.T) {
	if testing.Short() {
		t.Skip("opens five relays and fsyncs on disk")
	}
	rep, err := Federation(t.Context(), FederationOptions{Nodes: 5, Peers: 2, Lessons: 10, Idle: time.Second, Seed: 3, Dir: t.TempDir(), Push: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Delivered != rep.Expected || rep.Expected != 40 || rep.P99 < rep.P50 || rep.LoadBytesPerNodeMin <= 0 ||
		rep.Restarted != 1 || rep.RestartDelivered != rep.RestartExpected {
		t.Fatalf("report %+v", rep)
	}
	if p := rep.Partition; p == nil || p.Rounds == 0 || p.Delivered[len(p.Delivered)-1] != p.Expected || p.Expected != 5*p.Lessons {
		t.Fatalf("partition heal: %+v", rep.Partition)
	}
	t.Logf("partition heal: %+v", *rep.Partition)
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil || !strings.Contains(b.String(), "delivered 40 of 40") {
		t.Errorf("table (%v):\n%s", err, b.String())
	}
}

// TestNegentropy_Smoke: two nodes of 300 events each reconcile, and the
// 1% scenario moves only what differs.
func TestNegentropy_Smoke(t *testing.T) {
	if testing.Short() {
		t.Skip("opens four relays and fsyncs on disk")
	}
	rep, err := Negentropy(t.Context(), NegentropyOptions{Events: 300, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	d, one := rep.Scenarios[0], rep.Scenarios[1]
	if d.OnlyA != 300 || d.OnlyB != 300 || one.OnlyB != 3 || one.SyncBytes >= one.REQBytes/10 {
		t.Fatalf("scenarios %+v", rep.Scenarios)
	}
}

// TestHops: on a ring of 4 (each node follows the next) a lesson needs 1,
// 2 and 3 hops to reach the others; a chord shortens it.
func TestHops(t *testing.T) {
	if mean, most := hops([][]int{{1}, {2}, {3}, {0}}); mean != 2 || most != 3 {
		t.Errorf("ring of 4: mean %v, max %d; want 2, 3", mean, most)
	}
	if mean, most := hops([][]int{{1, 2}, {2}, {3}, {0}}); most != 3 || mean >= 2 {
		t.Errorf("ring of 4 with a chord: mean %v, max %d", mean, most)
	}
}

// TestFederation_StateSmoke runs the federation bench with its state phase
// at a small N (CI): shared documents edited on both sides of a partition
// are identical on every replica after the heal.
func TestFederation_StateSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("opens four relays and four state stores")
	}
	rep, err := Federation(t.Context(), FederationOptions{Nodes: 4, Peers: 2, Lessons: 4, Idle: 100 * time.Millisecond, Seed: 5, Dir: t.TempDir(),
		Push: true, StateOwners: 2, StateDocs: 2, StateEdits: 2, StateInterval: time.Second})
	if err != nil {
		t.Fatal(err) // Federation fails when the state does not converge
	}
	s := rep.State
	if s == nil || s.Owners != 2 || s.Edits != 4*2*2 || s.Rounds < 1 || s.Converged <= 0 || s.Leaked != 0 || s.Diverged == 0 {
		t.Fatalf("state: %+v", s)
	}
	t.Logf("state partition heal: %+v", *s)
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil || !strings.Contains(b.String(), "state partition: 2 owners") {
		t.Errorf("table (%v):\n%s", err, b.String())
	}
}
