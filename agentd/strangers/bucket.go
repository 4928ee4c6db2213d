package strangers

import "time"

// bucket is one token bucket.
type bucket struct {
	tokens   float64
	last     time.Time
	notified bool // the sender was told it ran dry (sender buckets only)
}

// newBucket is a full bucket at now.
func newBucket(r Rate, now time.Time) *bucket {
	return &bucket{tokens: float64(r.Burst), last: now}
}

// refill adds the tokens earned since the last refill.
func (b *bucket) refill(r Rate, now time.Time) {
	if r.Every > 0 && now.After(b.last) {
		b.tokens = min(float64(r.Burst), b.tokens+float64(now.Sub(b.last))/float64(r.Every))
	}
	b.last = now
}

// has reports whether b (refilled) holds a token; an off rate always does.
func (b *bucket) has(r Rate, now time.Time) bool {
	if r.off() {
		return true
	}
	b.refill(r, now)
	return b.tokens >= 1
}

// full reports whether b (refilled) is full: a new bucket would be the same.
func (b *bucket) full(r Rate, now time.Time) bool {
	b.refill(r, now)
	return b.tokens >= float64(r.Burst)
}

// buckets is a bounded map of buckets of one rate.
type buckets struct {
	rate Rate
	max  int
	m    map[string]*bucket
}

func newBuckets(r Rate, max int) *buckets {
	return &buckets{rate: r, max: max, m: map[string]*bucket{}}
}

// peek returns key's bucket, or nil when it has none (a full one).
func (bs *buckets) peek(key string) *bucket { return bs.m[key] }

// has reports whether key has a token.
func (bs *buckets) has(key string, now time.Time) bool {
	b := bs.m[key]
	return b == nil || b.has(bs.rate, now)
}

// spend takes a token of key, creating its bucket; false when the map is
// at its cap and no bucket could be forgotten.
func (bs *buckets) spend(key string, now time.Time) bool {
	if bs.rate.off() {
		return true
	}
	b := bs.m[key]
	if b == nil {
		if len(bs.m) >= bs.max && !bs.forgetFull(now) {
			return false
		}
		b = newBucket(bs.rate, now)
		bs.m[key] = b
	}
	b.refill(bs.rate, now)
	b.tokens--
	b.notified = false
	return true
}

// forgetFull drops the buckets that refilled completely; true if any was.
func (bs *buckets) forgetFull(now time.Time) bool {
	n := len(bs.m)
	for k, b := range bs.m {
		if b.full(bs.rate, now) {
			delete(bs.m, k)
		}
	}
	return len(bs.m) < n
}
