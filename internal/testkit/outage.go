package testkit

import (
	"sync/atomic"
	"testing"
)

// Outage listens on loopback and forwards every connection to target
// until Down, which drops every connection at once and refuses new ones
// (accepted and closed) until Up: a relay or database that goes away and
// comes back on the same address. It closes at cleanup and waits for its
// goroutines.
//
//	o := testkit.NewOutage(t, "127.0.0.1:7447")
//	url := "ws://" + o.Addr()
//	o.Down()
//	testkit.WaitFor(t, time.Minute, "a retry", func() bool { return o.Refused() > 0 })
//	o.Up()
type Outage struct {
	f    forwarder
	down atomic.Bool
}

// NewOutage starts forwarding to target (host:port), up.
func NewOutage(t testing.TB, target string) *Outage {
	t.Helper()
	o := &Outage{}
	o.f = forwarder{target: target, up: func() bool { return !o.down.Load() }}
	o.f.listen(t)
	return o
}

// Addr is the host:port to dial instead of target.
func (o *Outage) Addr() string { return o.f.addr() }

// Down drops every forwarded connection and refuses new ones until Up.
func (o *Outage) Down() {
	o.down.Store(true)
	o.f.drop()
}

// Up forwards new connections again.
func (o *Outage) Up() { o.down.Store(false) }

// Refused counts the connections refused while down: a client's retries.
func (o *Outage) Refused() int { return o.f.refusals() }
