package dm

import (
	"sync"
	"time"
)

// limiter is a token bucket per sender. A sender that runs dry is told so
// once (notice); later messages in the same dry spell are dropped quietly.
type limiter struct {
	cfg RateLimit
	now func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens   float64
	last     time.Time
	notified bool // the sender was told it is rate-limited
}

// verdict of one message.
type verdict int

const (
	allow  verdict = iota // answer it
	notify                // send the rate-limited notice
	drop                  // ignore it
)

// maxBuckets bounds the map; beyond it, full buckets are forgotten.
const maxBuckets = 10_000

func newLimiter(cfg RateLimit, now func() time.Time) *limiter {
	return &limiter{cfg: cfg, now: now, buckets: map[string]*bucket{}}
}

// take spends a token of sender.
func (l *limiter) take(sender string) verdict {
	if l.cfg.Burst < 0 {
		return allow
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.bucket(sender, now)
	b.refill(now, l.cfg)
	switch {
	case b.tokens >= 1:
		b.tokens--
		b.notified = false
		return allow
	case !b.notified:
		b.notified = true
		return notify
	default:
		return drop
	}
}

func (l *limiter) bucket(sender string, now time.Time) *bucket {
	b, ok := l.buckets[sender]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			l.forgetFull(now)
		}
		b = &bucket{tokens: float64(l.cfg.Burst), last: now}
		l.buckets[sender] = b
	}
	return b
}

// forgetFull drops the buckets that have refilled completely: a new bucket
// would be the same.
func (l *limiter) forgetFull(now time.Time) {
	for k, b := range l.buckets {
		if b.refill(now, l.cfg); b.tokens >= float64(l.cfg.Burst) {
			delete(l.buckets, k)
		}
	}
}

func (b *bucket) refill(now time.Time, cfg RateLimit) {
	if cfg.Every > 0 {
		b.tokens = min(float64(cfg.Burst), b.tokens+float64(now.Sub(b.last))/float64(cfg.Every))
	}
	b.last = now
}
