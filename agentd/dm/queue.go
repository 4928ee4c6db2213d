package dm

import (
	"context"
	"sync"
)

// fifo is a bounded first-in first-out queue. A producer that must not
// block (the relay's hook) pushes and, when it is full, drops the oldest
// item; one that may wait (the catch-up) waits for room.
type fifo[T any] struct {
	size int
	wake chan struct{} // an item may be waiting
	room chan struct{} // there may be room

	mu    sync.Mutex
	items []T
}

func newFifo[T any](size int) *fifo[T] {
	return &fifo[T]{size: size, wake: make(chan struct{}, 1), room: make(chan struct{}, 1)}
}

// push appends v; when the queue is full it drops the oldest item and
// returns it (dropped true).
func (q *fifo[T]) push(v T) (old T, dropped bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) >= q.size {
		old, dropped = q.items[0], true
		q.shift()
	}
	q.items = append(q.items, v)
	signal(q.wake)
	return old, dropped
}

// tryPush appends v unless the queue is full.
func (q *fifo[T]) tryPush(v T) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) >= q.size {
		return false
	}
	q.items = append(q.items, v)
	signal(q.wake)
	return true
}

// pushWait appends v, waiting for room; false if ctx ended first.
func (q *fifo[T]) pushWait(ctx context.Context, v T) bool {
	for {
		if q.tryPush(v) {
			return true
		}
		select {
		case <-q.room:
		case <-ctx.Done():
			return false
		}
	}
}

// pop waits for the oldest item; false once ctx ends.
func (q *fifo[T]) pop(ctx context.Context) (T, bool) {
	for {
		if v, ok := q.tryPop(); ok {
			return v, true
		}
		select {
		case <-q.wake:
		case <-ctx.Done():
			var zero T
			return zero, false
		}
	}
}

// tryPop takes the oldest item, if any.
func (q *fifo[T]) tryPop() (T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var zero T
	if len(q.items) == 0 {
		return zero, false
	}
	v := q.items[0]
	q.shift()
	signal(q.room)
	if len(q.items) > 0 {
		signal(q.wake) // for another consumer
	}
	return v, true
}

// shift removes the first item; the caller holds mu.
func (q *fifo[T]) shift() {
	var zero T
	q.items[0] = zero
	q.items = q.items[1:]
}

// signal posts on a one-slot channel without blocking.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// idSet is the set of wrap ids queued or being processed, so that a wrap
// offered twice (live and by the catch-up) is handled once.
type idSet struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

func newIDSet() *idSet { return &idSet{ids: map[string]struct{}{}} }

// add adds id; false if it was there.
func (s *idSet) add(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ids[id]; ok {
		return false
	}
	s.ids[id] = struct{}{}
	return true
}

// del removes id.
func (s *idSet) del(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ids, id)
}

// recentSet remembers the last size ids added (the oldest is forgotten
// first). Safe for concurrent use.
type recentSet struct {
	mu   sync.Mutex
	ids  map[string]struct{}
	ring []string
	next int
}

func newRecentSet(size int) *recentSet {
	return &recentSet{ids: make(map[string]struct{}, size), ring: make([]string, size)}
}

// add remembers id, forgetting the oldest when full.
func (r *recentSet) add(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.ids[id]; ok {
		return
	}
	delete(r.ids, r.ring[r.next])
	r.ring[r.next] = id
	r.ids[id] = struct{}{}
	r.next = (r.next + 1) % len(r.ring)
}

// has reports whether id is remembered.
func (r *recentSet) has(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.ids[id]
	return ok
}
