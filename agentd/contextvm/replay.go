package contextvm

import (
	"container/list"
	"sync"
	"time"
)

// seen remembers recently served event ids for a time (window) and up to
// a count (max; the oldest goes first): the same signed request delivered
// twice (by two relays, or replayed by a stranger) is served once. It is
// keyed on the event id, never on the JSON-RPC id: every MCP session
// numbers its requests from 0, and a caller's new request is a new event.
type seen struct {
	window time.Duration
	max    int
	now    func() time.Time

	mu    sync.Mutex
	order *list.List // of seenEntry, oldest first
	ids   map[string]*list.Element
}

type seenEntry struct {
	id string
	at time.Time
}

func newSeen(window time.Duration, max int, now func() time.Time) *seen {
	return &seen{window: window, max: max, now: now, order: list.New(), ids: map[string]*list.Element{}}
}

// add records id and reports whether it was already there.
func (s *seen) add(id string) (dup bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	if _, ok := s.ids[id]; ok {
		return true
	}
	s.ids[id] = s.order.PushBack(seenEntry{id, now})
	for s.order.Len() > s.max {
		s.drop(s.order.Front())
	}
	return false
}

// expire forgets the entries older than the window. s.mu is held.
func (s *seen) expire(now time.Time) {
	for e := s.order.Front(); e != nil && now.Sub(e.Value.(seenEntry).at) > s.window; e = s.order.Front() {
		s.drop(e)
	}
}

func (s *seen) drop(e *list.Element) {
	s.order.Remove(e)
	delete(s.ids, e.Value.(seenEntry).id)
}
