package dm

import (
	"context"
	"testing"
	"time"
)

// A full fifo drops its oldest item for push, refuses tryPush, and makes
// pushWait wait for room.
func TestFifo_bounded(t *testing.T) {
	q := newFifo[int](2)
	q.push(1)
	q.push(2)
	if old, dropped := q.push(3); !dropped || old != 1 {
		t.Fatalf("push on a full queue dropped %v %v, want the oldest (1)", old, dropped)
	}
	if q.tryPush(4) {
		t.Fatal("tryPush on a full queue succeeded")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pushed := make(chan bool)
	go func() { pushed <- q.pushWait(ctx, 5) }()
	for _, want := range []int{2, 3, 5} {
		if got, ok := q.pop(ctx); !ok || got != want {
			t.Fatalf("pop = %v %v, want %d", got, ok, want)
		}
	}
	if !<-pushed {
		t.Fatal("pushWait gave up")
	}
	cancel()
	if _, ok := q.pop(ctx); ok {
		t.Fatal("pop on an empty queue after its ctx ended returned an item")
	}
}

// A recentSet forgets its oldest id once full.
func TestRecentSet_forgetsTheOldest(t *testing.T) {
	r := newRecentSet(2)
	r.add("a")
	r.add("b")
	r.add("b")
	r.add("c")
	if r.has("a") || !r.has("b") || !r.has("c") {
		t.Fatalf("after a, b, b, c in a set of 2: a %v b %v c %v", r.has("a"), r.has("b"), r.has("c"))
	}
}
