package memguard

import "time"

// NewWith is New with the figure, the clock and the collection injected
// (for tests).
func NewWith(ceiling int64, inUse func() int64, now func() time.Time, collect func()) *Guard {
	g := New(ceiling)
	if g != nil {
		g.inUse, g.now, g.collect = inUse, now, collect
	}
	return g
}
