package relayclient

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is a reconnect schedule: Min, then doubling up to Max, each wait
// jittered down by up to half.
type Backoff struct {
	Min, Max time.Duration
}

// DefaultBackoff is what a zero Backoff means.
var DefaultBackoff = Backoff{Min: 500 * time.Millisecond, Max: time.Minute}

// redialBackoff spaces Relay's dials after a failed one (short: a caller
// waits for it).
var redialBackoff = Backoff{Min: 100 * time.Millisecond, Max: 2 * time.Second}

// OrDefault fills a zero Min from DefaultBackoff and raises Max to at
// least Min.
func (b Backoff) OrDefault() Backoff {
	if b.Min <= 0 {
		b.Min = DefaultBackoff.Min
	}
	if b.Max < b.Min {
		b.Max = max(b.Min, DefaultBackoff.Max)
	}
	return b
}

// Delay is the wait before reconnect attempt n (0 for the first retry):
// Min·2ⁿ capped at Max, then a random point in its upper half, so that
// clients which lost the same relay do not all come back at once.
func (b Backoff) Delay(n int) time.Duration {
	b = b.OrDefault()
	d := b.Max
	if n < 32 && b.Min<<n > 0 && b.Min<<n < b.Max {
		d = b.Min << n
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
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
