package nostrrpc

import (
	"container/list"
	"sync"
)

// seen is a bounded set of recently answered requests (least recently
// added evicted first): a request delivered twice — by two relays, or
// replayed by a stranger — is answered once.
type seen struct {
	mu    sync.Mutex
	max   int
	order *list.List // of string, oldest at the front
	keys  map[string]*list.Element
}

func newSeen(max int) *seen {
	return &seen{max: max, order: list.New(), keys: map[string]*list.Element{}}
}

// add records keys and reports whether any of them was already there.
func (s *seen) add(keys ...string) (dup bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if _, ok := s.keys[k]; ok {
			dup = true
		}
	}
	if dup {
		return true
	}
	for _, k := range keys {
		s.keys[k] = s.order.PushBack(k)
		for s.order.Len() > s.max {
			oldest := s.order.Front()
			s.order.Remove(oldest)
			delete(s.keys, oldest.Value.(string))
		}
	}
	return false
}
