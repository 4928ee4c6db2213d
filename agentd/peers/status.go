package peers

import (
	"sync"
	"sync/atomic"
	"time"
)

// PeerStatus is one peer's state and counters since Run started.
type PeerStatus struct {
	URL       string
	Connected bool
	// LastSeen is when the peer last answered: connected, sent an event,
	// finished a catch-up or acknowledged a push.
	LastSeen time.Time
	// Received counts events the peer sent (catch-up, live and pages);
	// Stored those the local store accepted (a duplicate counts); Refused
	// those dropped: a bad id or signature, or a local refusal.
	Received, Stored, Refused int64
	// Duplicates counts received events found already stored locally (a
	// copy another peer delivered first, a catch-up's overlap): counted in
	// Stored, not verified and not stored again. Verified counts the
	// signature checks of the others.
	Duplicates, Verified int64
	// Pushed counts outbox events the peer accepted (a duplicate counts);
	// PushRefused those it refused for good ("invalid:", "blocked:", ...).
	Pushed, PushRefused int64
	// LastError is why the last session ended or the last attempt failed
	// ("" if none has).
	LastError string
}

// stats are a peer's live counters.
type stats struct {
	connected                 atomic.Bool
	received, stored, refused atomic.Int64
	duplicates, verified      atomic.Int64
	pushed, pushRefused       atomic.Int64
	lastSeen                  atomic.Int64 // unix nanoseconds

	mu      sync.Mutex
	lastErr string
}

func (s *stats) seen() { s.lastSeen.Store(time.Now().UnixNano()) }

func (s *stats) setError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.lastErr = err.Error()
	}
}

func (s *stats) snapshot(url string) PeerStatus {
	st := PeerStatus{
		URL:         url,
		Connected:   s.connected.Load(),
		Received:    s.received.Load(),
		Stored:      s.stored.Load(),
		Refused:     s.refused.Load(),
		Duplicates:  s.duplicates.Load(),
		Verified:    s.verified.Load(),
		Pushed:      s.pushed.Load(),
		PushRefused: s.pushRefused.Load(),
	}
	if ns := s.lastSeen.Load(); ns != 0 {
		st.LastSeen = time.Unix(0, ns)
	}
	s.mu.Lock()
	st.LastError = s.lastErr
	s.mu.Unlock()
	return st
}
