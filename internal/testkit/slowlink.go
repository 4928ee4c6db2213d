package testkit

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// SlowLink listens on loopback and forwards every connection to target,
// holding each chunk the target sends back for delay before passing it
// on: a database or relay answering as slowly as on a starved machine,
// reproducibly. It returns the address to dial; it closes at cleanup and
// waits for its goroutines.
//
//	addr := testkit.SlowLink(t, "127.0.0.1:5432", 100*time.Millisecond)
func SlowLink(t testing.TB, target string, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &slowLink{ln: ln, target: target, delay: delay, conns: map[net.Conn]bool{}}
	l.wg.Go(l.accept)
	t.Cleanup(l.close)
	return ln.Addr().String()
}

type slowLink struct {
	ln     net.Listener
	target string
	delay  time.Duration
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

func (l *slowLink) accept() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", l.target)
		if err != nil || !l.track(c, up) {
			c.Close()
			if up != nil {
				up.Close()
			}
			continue
		}
		l.wg.Go(func() { io.Copy(up, c); up.Close() })
		l.wg.Go(func() { l.copySlowly(c, up); c.Close() })
	}
}

// track records both ends so that close can end them; false once closed.
func (l *slowLink) track(cs ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	for _, c := range cs {
		l.conns[c] = true
	}
	return true
}

// copySlowly passes what src sends to dst, each chunk delay late.
func (l *slowLink) copySlowly(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			<-time.After(l.delay) // the injected latency, not synchronisation
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (l *slowLink) close() {
	l.ln.Close()
	l.mu.Lock()
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}
