package peers

import (
	"encoding/hex"
	"sync"
)

// DefaultSeenSize is the number of recently stored event ids a Syncer
// remembers (Config.SeenSize): about 40 bytes each.
const DefaultSeenSize = 16384

// seenIDs is a bounded set of the ids of events recently stored locally,
// shared by every peer of a Syncer: each peer that follows the same
// events delivers its own copy of every one of them, and the copies after
// the first are found here without a signature check or a store lookup.
// When full, the oldest id is forgotten (a forgotten id is found by the
// store's has-id lookup instead).
type seenIDs struct {
	mu   sync.Mutex
	set  map[[32]byte]struct{}
	ring [][32]byte // insertion order; next overwrites the oldest
	next int
}

func newSeenIDs(size int) *seenIDs {
	return &seenIDs{set: make(map[[32]byte]struct{}, size), ring: make([][32]byte, 0, size)}
}

// add remembers id (64 hex characters; anything else is ignored).
func (s *seenIDs) add(id string) {
	k, ok := idKey(id)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.set[k]; dup {
		return
	}
	if len(s.ring) < cap(s.ring) {
		s.ring = append(s.ring, k)
	} else {
		delete(s.set, s.ring[s.next])
		s.ring[s.next] = k
		s.next = (s.next + 1) % len(s.ring)
	}
	s.set[k] = struct{}{}
}

// has reports whether id was added and not forgotten since.
func (s *seenIDs) has(id string) bool {
	k, ok := idKey(id)
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, found := s.set[k]
	return found
}

func idKey(id string) (k [32]byte, ok bool) {
	if len(id) != 64 {
		return k, false
	}
	_, err := hex.Decode(k[:], []byte(id))
	return k, err == nil
}
