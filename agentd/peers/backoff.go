package peers

import (
	"math/rand/v2"
	"time"
)

func (b Backoff) withDefaults() Backoff {
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
// nodes which lost the same peer do not all come back at once.
func (b Backoff) Delay(n int) time.Duration {
	b = b.withDefaults()
	d := b.Max
	if n < 32 && b.Min<<n > 0 && b.Min<<n < b.Max {
		d = b.Min << n
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
}
