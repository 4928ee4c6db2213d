package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is a retry schedule: Min, then doubling up to Max, each wait
// jittered down by up to half. The zero value is Default.
type Backoff struct {
	Min, Max time.Duration
}

// Default is what a zero Backoff means.
var Default = Backoff{Min: 500 * time.Millisecond, Max: time.Minute}

// OrDefault fills a zero Min from Default and raises Max to at least Min.
func (b Backoff) OrDefault() Backoff {
	if b.Min <= 0 {
		b.Min = Default.Min
	}
	if b.Max < b.Min {
		b.Max = max(b.Min, Default.Max)
	}
	return b
}

// Delay is the wait before retry n (0 for the first): Min·2ⁿ capped at
// Max, then a random point in its upper half.
func (b Backoff) Delay(n int) time.Duration {
	d := b.Ceiling(n)
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
}

// Ceiling is Delay(n) before the jitter: Min·2ⁿ capped at Max.
func (b Backoff) Ceiling(n int) time.Duration {
	b = b.OrDefault()
	if n >= 0 && n < 32 && b.Min<<n > 0 && b.Min<<n < b.Max {
		return b.Min << n
	}
	return b.Max
}

// Sleep waits d or until ctx ends; it reports whether d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
