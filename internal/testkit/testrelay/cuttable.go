package testrelay

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// Cuttable is a relay served over a real websocket whose client
// connections the test can cut (Cut), hijacked websockets included.
type Cuttable struct {
	*relay.Relay
	URL string // ws://...

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// ServeCuttable opens a relay as Open does and serves it behind httptest,
// tracking its connections. At cleanup it cuts them, closes the server,
// waits for the relay to see its clients gone, and closes the relay.
//
//	r := testrelay.ServeCuttable(t)
//	r.Cut() // every client is disconnected; they may connect again
func ServeCuttable(t testing.TB, cfg ...relay.Config) *Cuttable {
	t.Helper()
	c := &Cuttable{Relay: Open(t, cfg...), conns: map[net.Conn]struct{}{}}
	srv := httptest.NewUnstartedServer(c.Relay)
	srv.Config.ConnState = c.track
	srv.Start()
	c.URL = "ws" + strings.TrimPrefix(srv.URL, "http")
	t.Cleanup(func() { // before Open's: the relay closes last
		c.Cut()
		srv.Close()
		testkit.WaitFor(t, 20*time.Second, "the relay's clients to go", func() bool { return c.Connections() == 0 })
	})
	return c
}

// track records the server's connections.
func (c *Cuttable) track(conn net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s == http.StateNew {
		c.conns[conn] = struct{}{}
	} else if s == http.StateClosed {
		delete(c.conns, conn)
	}
}

// Cut closes every client connection.
func (c *Cuttable) Cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for conn := range c.conns {
		conn.Close()
		delete(c.conns, conn)
	}
}
