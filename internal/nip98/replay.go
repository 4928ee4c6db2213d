package nip98

import (
	"net/http"
	"sync"
	"time"
)

// MaxSeen bounds the event ids a Guard remembers against replay.
const MaxSeen = 4096

// Replay remembers the NIP-98 events used within their validity (2*Window),
// so that a captured Authorization header cannot be used again. It holds at
// most max live ids. It is safe for concurrent use.
type Replay struct {
	max  int
	mu   sync.Mutex
	seen map[string]time.Time // event id -> when it may be forgotten
}

// NewReplay returns a replay memory of at most max live event ids.
func NewReplay(max int) *Replay {
	return &Replay{max: max, seen: map[string]time.Time{}}
}

// Use records id as used at now: ErrReplay if it was used already (and
// is still live), ErrBusy if max live ids are remembered already.
func (c *Replay) Use(id string, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if until, ok := c.seen[id]; ok && now.Before(until) {
		return ErrReplay
	}
	if len(c.seen) >= c.max {
		for k, until := range c.seen {
			if !now.Before(until) {
				delete(c.seen, k)
			}
		}
	}
	if len(c.seen) >= c.max {
		return ErrBusy
	}
	c.seen[id] = now.Add(2 * Window)
	return nil
}

// Guard verifies NIP-98 headers of requests whose meaning is their URL and
// method (no body is bound), each event used once. The zero value is not
// usable: make one with NewGuard. It is safe for concurrent use.
type Guard struct {
	now  func() time.Time
	seen *Replay
}

// NewGuard returns a guard reading the time from now (nil: time.Now),
// remembering at most MaxSeen events.
func NewGuard(now func() time.Time) *Guard {
	if now == nil {
		now = time.Now
	}
	return &Guard{now: now, seen: NewReplay(MaxSeen)}
}

// VerifyFor checks r's NIP-98 header against RequestURL(r) and r's method
// (Verify, without a body) and returns the signer's hex pubkey.
//
// admit (nil: everyone) is asked whether the signer may go on before the
// event is remembered: a refused signer's event is not, so keys the
// caller does not know cannot fill the replay memory (MaxSeen) and lock
// the known ones out. admit's error is returned as is.
func (g *Guard) VerifyFor(r *http.Request, admit func(pubkey string) error) (string, error) {
	now := g.now()
	pubkey, id, err := Verify(r, RequestURL(r), nil, now)
	if err != nil {
		return "", err
	}
	if admit != nil {
		if err := admit(pubkey); err != nil {
			return "", err
		}
	}
	return pubkey, g.seen.Use(id, now)
}
