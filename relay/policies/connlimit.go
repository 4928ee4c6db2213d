package policies

import (
	"fmt"
	"net/http"
	"sync"
)

// ConnLimiter bounds open websocket connections per client address and
// in all. Its zero value is not usable; build it with NewConnLimiter. Safe
// for concurrent use.
type ConnLimiter struct {
	perIP, total int // bounds; <= 0: none

	mu    sync.Mutex
	byIP  map[string]int
	count int
}

// NewConnLimiter bounds connections to perIP per address and total in
// all (a bound <= 0 is none).
func NewConnLimiter(perIP, total int) *ConnLimiter {
	return &ConnLimiter{perIP: perIP, total: total, byIP: map[string]int{}}
}

// Admit takes a slot for a connection from ip. On refusal, status is the
// HTTP status to answer (503 when the node is full, 429 when ip has too
// many) and reason says which bound; otherwise release gives the slot
// back (call it exactly once, when the connection ends).
func (l *ConnLimiter) Admit(ip string) (release func(), status int, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total > 0 && l.count >= l.total {
		return nil, http.StatusServiceUnavailable,
			fmt.Sprintf("rate-limited: the node serves at most %d websocket connections; try again later", l.total)
	}
	if l.perIP > 0 && l.byIP[ip] >= l.perIP {
		return nil, http.StatusTooManyRequests,
			fmt.Sprintf("rate-limited: at most %d websocket connections per client address", l.perIP)
	}
	l.count++
	l.byIP[ip]++
	var once sync.Once
	return func() { once.Do(func() { l.release(ip) }) }, 0, ""
}

func (l *ConnLimiter) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count--
	if l.byIP[ip]--; l.byIP[ip] <= 0 {
		delete(l.byIP, ip)
	}
}

// Open is the number of connections holding a slot.
func (l *ConnLimiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count
}
