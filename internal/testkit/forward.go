package testkit

import (
	"io"
	"net"
	"sync"
	"testing"
)

// forwarder listens on loopback and forwards every connection it admits
// to target: the TCP plumbing SlowLink and Outage share. back copies what
// the target sends to the client (io.Copy when nil); up, when set, says
// whether connections are forwarded now (a new one is refused, closed at
// once, while it says no).
type forwarder struct {
	ln     net.Listener
	target string
	back   func(dst, src net.Conn)
	up     func() bool
	wg     sync.WaitGroup

	mu      sync.Mutex
	conns   map[net.Conn]bool
	closed  bool
	refused int
}

// listen starts f accepting until the test ends; then it closes f and
// waits for its goroutines.
func (f *forwarder) listen(t testing.TB) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.ln, f.conns = ln, map[net.Conn]bool{}
	f.wg.Go(f.accept)
	t.Cleanup(f.close)
}

// addr is the host:port to dial instead of target.
func (f *forwarder) addr() string { return f.ln.Addr().String() }

func (f *forwarder) accept() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		if !f.admit() {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", f.target)
		if err != nil || !f.track(c, up) {
			c.Close()
			if up != nil {
				up.Close()
			}
			continue
		}
		f.wg.Go(func() { io.Copy(up, c); up.Close() })
		f.wg.Go(func() { f.copyBack(c, up); c.Close() })
	}
}

func (f *forwarder) copyBack(dst, src net.Conn) {
	if f.back != nil {
		f.back(dst, src)
		return
	}
	io.Copy(dst, src)
}

// admit reports whether a new connection is forwarded; it counts a refusal.
func (f *forwarder) admit() bool {
	if f.up == nil || f.up() {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refused++
	return false
}

// refusals counts the connections refused so far.
func (f *forwarder) refusals() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused
}

// track records both ends so that drop and close can end them; false once
// closed or no longer up (a connection admitted as drop ran).
func (f *forwarder) track(cs ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.up != nil && !f.up() {
		return false
	}
	for _, c := range cs {
		f.conns[c] = true
	}
	return true
}

// drop closes every forwarded connection.
func (f *forwarder) drop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		c.Close()
		delete(f.conns, c)
	}
}

func (f *forwarder) close() {
	f.ln.Close()
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.drop()
	f.wg.Wait()
}
