package testkit

import (
	"net"
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
	f := &forwarder{target: target, back: func(dst, src net.Conn) { copySlowly(dst, src, delay) }}
	f.listen(t)
	return f.addr()
}

// copySlowly passes what src sends to dst, each chunk delay late.
func copySlowly(dst, src net.Conn, delay time.Duration) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			<-time.After(delay) // the injected latency, not synchronisation
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
