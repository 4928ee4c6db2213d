package lookup

import (
	"sync"
	"time"
)

// memory is a bounded map with expiry: when full, the entry that expires
// first is dropped (a linear scan of at most max entries, only on insert
// into a full map).
type memory struct {
	mu  sync.Mutex
	max int
	m   map[string]entry
}

type entry struct {
	val   string
	until time.Time
}

func newMemory(max int) *memory { return &memory{max: max, m: map[string]entry{}} }

func (m *memory) get(key string, now time.Time) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[key]
	if !ok || now.After(e.until) {
		return "", false
	}
	return e.val, true
}

func (m *memory) put(key, val string, until time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.m[key]; !ok && len(m.m) >= m.max {
		m.evict()
	}
	m.m[key] = entry{val, until}
}

func (m *memory) evict() {
	var victim string
	var first time.Time
	for k, e := range m.m {
		if victim == "" || e.until.Before(first) {
			victim, first = k, e.until
		}
	}
	delete(m.m, victim)
}

// budget is a token bucket per relay: rate queries per minute, burst rate.
type budget struct {
	mu      sync.Mutex
	rate    float64
	max     int
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newBudget(perMinute, max int) *budget {
	return &budget{rate: float64(perMinute), max: max, buckets: map[string]*bucket{}}
}

// take spends one query on url; false when its budget is spent.
func (b *budget) take(url string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.buckets[url]
	if k == nil {
		if len(b.buckets) >= b.max {
			clear(b.buckets) // a stranger naming many relays resets budgets, never grows the map
		}
		k = &bucket{tokens: b.rate, at: now}
		b.buckets[url] = k
	}
	k.tokens = min(b.rate, k.tokens+now.Sub(k.at).Minutes()*b.rate)
	k.at = now
	if k.tokens < 1 {
		return false
	}
	k.tokens--
	return true
}
