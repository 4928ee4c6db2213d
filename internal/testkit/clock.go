package testkit

import (
	"sync"
	"time"
)

// Clock is a fake clock for code that takes a Now func: it stands still
// until the test moves it. Safe for concurrent use.
//
//	clk := testkit.NewClock(time.Now())
//	svc := New(Config{Now: clk.Now})
//	clk.Advance(time.Minute)
//
// Code that waits on timers (time.After, Ticker) wants testing/synctest
// instead: there the real clock is the fake one.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a Clock at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock d forward (backward if d < 0).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
