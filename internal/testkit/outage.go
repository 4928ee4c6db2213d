package testkit

import (
	"io"
	"net"
	"sync"
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
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu      sync.Mutex
	conns   map[net.Conn]bool
	down    bool
	closed  bool
	refused int
}

// NewOutage starts forwarding to target (host:port), up.
func NewOutage(t testing.TB, target string) *Outage {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &Outage{ln: ln, target: target, conns: map[net.Conn]bool{}}
	o.wg.Go(o.accept)
	t.Cleanup(o.close)
	return o
}

// Addr is the host:port to dial instead of target.
func (o *Outage) Addr() string { return o.ln.Addr().String() }

// Down drops every forwarded connection and refuses new ones until Up.
func (o *Outage) Down() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.down = true
	o.dropLocked()
}

// Up forwards new connections again.
func (o *Outage) Up() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.down = false
}

// Refused counts the connections refused while down: a client's retries.
func (o *Outage) Refused() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refused
}

func (o *Outage) accept() {
	for {
		c, err := o.ln.Accept()
		if err != nil {
			return
		}
		if !o.admit() {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", o.target)
		if err != nil || !o.track(c, up) {
			c.Close()
			if up != nil {
				up.Close()
			}
			continue
		}
		o.wg.Go(func() { io.Copy(up, c); up.Close() })
		o.wg.Go(func() { io.Copy(c, up); c.Close() })
	}
}

// admit reports whether a new connection is forwarded; it counts a refusal.
func (o *Outage) admit() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.down {
		o.refused++
	}
	return !o.down && !o.closed
}

// track records both ends so that Down and close can end them; false when
// down or closed meanwhile.
func (o *Outage) track(cs ...net.Conn) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.down || o.closed {
		return false
	}
	for _, c := range cs {
		o.conns[c] = true
	}
	return true
}

func (o *Outage) dropLocked() {
	for c := range o.conns {
		c.Close()
		delete(o.conns, c)
	}
}

func (o *Outage) close() {
	o.ln.Close()
	o.mu.Lock()
	o.closed = true
	o.dropLocked()
	o.mu.Unlock()
	o.wg.Wait()
}
