package relay

import (
	"sync"
	"time"
)

// maxReplayEntries bounds the NIP-98 auth events remembered; only the
// operators' are (a stranger is refused before), so it is reached only
// by an operator sending thousands of calls a minute.
const maxReplayEntries = 10_000

// replayCache remembers the NIP-98 auth events used within their validity
// window, so that a captured Authorization header cannot be replayed.
type replayCache struct {
	mu   sync.Mutex
	seen map[string]time.Time // event id -> when it stops being valid
}

func newReplayCache() *replayCache { return &replayCache{seen: map[string]time.Time{}} }

// use records id until expires; false if it was used already or the
// cache is full of live entries.
func (c *replayCache) use(id string, now, expires time.Time) (ok bool, full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.seen[id]; dup {
		return false, false
	}
	if len(c.seen) >= maxReplayEntries {
		for k, exp := range c.seen {
			if now.After(exp) {
				delete(c.seen, k)
			}
		}
		if len(c.seen) >= maxReplayEntries {
			return false, true
		}
	}
	c.seen[id] = expires
	return true, false
}
