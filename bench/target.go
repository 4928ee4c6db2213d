package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// Names of the two relays under test, as they appear in the report.
const (
	NameAgentnode = "agentnode"
	NameKhatru    = "khatru+lmdb"
)

// relayUnderTest is one relay: it serves websockets, stores events
// in-process (for loading a large store quickly) and closes its storage.
type relayUnderTest interface {
	http.Handler
	// Load stores evt without a websocket.
	Load(ctx context.Context, evt *nostr.Event) error
	// Close waits for websocket clients to go and closes the storage.
	Close(ctx context.Context) error
}

// opener opens a relay under test on a fresh data directory.
type opener struct {
	name   string
	open   func(ctx context.Context, dir string) (relayUnderTest, error)
	search bool   // it answers NIP-50 search filters
	loads  string // what its Load does
}

// openers are the relays compared, agentnode first.
var openers = []opener{
	{NameAgentnode, openAgentnode, true, "relay.Publish (id+signature check, policies, LMDB, search index)"},
	{NameKhatru, openPlainKhatru, false, "lmdb.SaveEvent"},
}

// server is a relay under test served on a loopback port.
type server struct {
	relay relayUnderTest
	URL   string // ws://127.0.0.1:port
	hs    *http.Server
	done  chan error // receives Serve's result
}

// serve opens o on dir and serves it on 127.0.0.1:0.
func serve(ctx context.Context, o opener, dir string) (*server, error) {
	rut, err := o.open(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", o.name, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("listen: %w", err), rut.Close(ctx))
	}
	s := &server{relay: rut, URL: "ws://" + ln.Addr().String(), done: make(chan error, 1),
		hs: &http.Server{Handler: rut, ReadHeaderTimeout: 10 * time.Second}}
	go func() { s.done <- s.hs.Serve(ln) }()
	return s, nil
}

// Close stops the listener, waits for Serve to return, then closes the
// relay (which waits for its websocket clients to go).
func (s *server) Close(ctx context.Context) error {
	err := s.hs.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return errors.Join(err, s.relay.Close(ctx))
}

// closeTimeout bounds how long closing one relay may take.
const closeTimeout = 30 * time.Second

// closeServer closes s with its own deadline, joining the error into *errp.
func closeServer(s *server, errp *error) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	*errp = errors.Join(*errp, s.Close(ctx))
}
