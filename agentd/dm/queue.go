package dm

import (
	"context"
	"sync"

	"github.com/nbd-wtf/go-nostr"
)

// queue is a bounded FIFO of gift wraps that remembers which ids it holds
// or is processing, so a wrap offered twice (live and by the catch-up) is
// handled once.
type queue struct {
	size int
	wake chan struct{} // one pending signal

	mu      sync.Mutex
	items   []*nostr.Event
	holding map[string]struct{} // queued or being processed
}

func newQueue(size int) *queue {
	return &queue{size: size, wake: make(chan struct{}, 1), holding: map[string]struct{}{}}
}

// push appends evt unless it is already held; false if the queue is full.
func (q *queue) push(evt *nostr.Event) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.holding[evt.ID]; ok {
		return true
	}
	if len(q.items) >= q.size {
		return false
	}
	q.holding[evt.ID] = struct{}{}
	q.items = append(q.items, evt)
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// pop waits for the next wrap; nil once ctx ends.
func (q *queue) pop(ctx context.Context) *nostr.Event {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			evt := q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			q.mu.Unlock()
			return evt
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-ctx.Done():
			return nil
		}
	}
}

// release forgets id once it is processed (the ledger remembers it) or
// was not ours.
func (q *queue) release(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.holding, id)
}
