package relayclient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
)

// proxy is a TCP forwarder in front of a relay that the test can cut
// (every connection dropped at once, mid-message or not) or stall (it
// stops reading what the client sends).
type proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	conns   []net.Conn
	stalled bool
	release chan struct{} // closed at cleanup: a stalled copy ends
	copies  sync.WaitGroup
}

func openProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: strings.TrimPrefix(target, "http://"), release: make(chan struct{})}
	var accepts sync.WaitGroup
	accepts.Go(p.accept)
	t.Cleanup(func() {
		ln.Close()
		accepts.Wait()
		close(p.release)
		p.cut()
		p.copies.Wait()
	})
	return p
}

func (p *proxy) url() string { return "ws://" + p.ln.Addr().String() }

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.copies.Go(func() { io.Copy(c, up); c.Close() })
		p.copies.Go(func() { p.forward(up, c); up.Close() })
	}
}

// forward copies what the client sends to the relay until either side
// closes; once stalled, it stops reading (until cleanup).
func (p *proxy) forward(up, c net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		p.mu.Lock()
		stalled := p.stalled
		p.mu.Unlock()
		if stalled {
			<-p.release
			return
		}
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) stall() {
	p.mu.Lock()
	p.stalled = true
	p.mu.Unlock()
}

// cut drops every connection through the proxy.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// A connection dropped while many publishes are being written fails them
// all with an error (no panic, no hang), and the Relay reconnects on the
// next use. Run with -race: the writers, the reader and Close race here.
func TestRelay_dropMidWrite(t *testing.T) {
	srv, _ := serve(t)
	px := openProxy(t, srv.URL)
	k := testkit.NewKey(t)
	c := relayclient.New(px.url(), k.SK, quiet)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Publish(ctx, note(t, k, "first")); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 32<<10) // a write that takes a while on the wire
	var wg sync.WaitGroup
	var failed atomic.Int64
	for w := range 8 {
		wg.Go(func() {
			for i := range 20 {
				if i == 5 && w == 0 {
					px.cut() // mid-stream: some writes are half-sent
				}
				evt := note(t, k, fmt.Sprint(w, i, big))
				err := c.Publish(ctx, evt)
				if err != nil {
					failed.Add(1)
				}
				if err != nil && ctx.Err() != nil {
					t.Errorf("publish hung until the test's deadline: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d of 160 publishes failed with the connection", failed.Load())
	evt := note(t, k, "after the drop")
	testkit.WaitFor(t, 10*time.Second, "a publish through a new connection", func() bool {
		return c.Publish(ctx, evt) == nil
	})
	got, err := c.Query(ctx, nostr.Filter{IDs: []string{evt.ID}})
	if err != nil || len(got) != 1 {
		t.Fatalf("Query after the reconnect = %d events, %v; want the event", len(got), err)
	}
}

// A subscription whose connection drops ends with ErrSubscriptionEnded
// (wrapping ErrConnClosed); a Subscribe after it reconnects and gets the
// stored events and live ones.
func TestRelay_dropMidSubscription(t *testing.T) {
	srv, _ := serve(t)
	px := openProxy(t, srv.URL)
	k := testkit.NewKey(t)
	c := relayclient.New(px.url(), k.SK, quiet)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	filters := nostr.Filters{{Authors: []string{k.PK}}}

	for round := range 3 {
		got := make(chan *nostr.Event, 16)
		eose := make(chan struct{}, 1)
		done := make(chan error, 1)
		go func() {
			done <- c.Subscribe(ctx, filters, func(e *nostr.Event) { got <- e }, func() { eose <- struct{}{} })
		}()
		for range round { // the events of the earlier rounds, stored
			recv(t, got, round)
		}
		select {
		case <-eose:
		case err := <-done:
			t.Fatalf("round %d: Subscribe = %v before EOSE", round, err)
		}
		live := note(t, k, fmt.Sprint("live ", round))
		if err := c.Publish(ctx, live); err != nil {
			t.Fatalf("round %d: publish: %v", round, err)
		}
		if e := recv(t, got, round); e.ID != live.ID {
			t.Fatalf("round %d: got %s, want the live event", round, e.ID)
		}
		px.cut()
		select {
		case err := <-done:
			if !errors.Is(err, relayclient.ErrSubscriptionEnded) || !errors.Is(err, relayclient.ErrConnClosed) {
				t.Fatalf("round %d: Subscribe after the drop = %v, want ErrSubscriptionEnded wrapping ErrConnClosed", round, err)
			}
		case <-ctx.Done():
			t.Fatalf("round %d: Subscribe did not return after the drop", round)
		}
	}
}

func recv(t *testing.T, ch <-chan *nostr.Event, round int) *nostr.Event {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(10 * time.Second):
		t.Fatalf("round %d: no event within 10 s", round)
		return nil
	}
}

// A relay that stops reading fails the write after the write timeout and
// ends the connection: the writer is not held forever.
func TestConn_writeTimeoutOnStalledRelay(t *testing.T) {
	srv, _ := serve(t)
	px := openProxy(t, srv.URL)
	k := testkit.NewKey(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := relayclient.Dial(ctx, px.url(), relayclient.Options{WriteTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	px.stall()                          // from now on nothing the client sends reaches the relay
	big := strings.Repeat("x", 256<<10) // under the relay's message limit
	start := time.Now()
	errs := make(chan error, 64)
	for i := range 64 { // 16 MB: more than the socket buffers hold
		evt := note(t, k, fmt.Sprint(i, big))
		go func() { errs <- conn.Publish(ctx, evt) }()
	}
	for range 64 {
		if err := <-errs; !errors.Is(err, relayclient.ErrConnClosed) {
			t.Fatalf("Publish into a stalled relay = %v, want the connection ended", err)
		}
	}
	// Without the write timeout the writer would wait for the relay, and
	// every publish for its OK (15 s).
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the publishes failed after %v, want about the 200 ms write timeout", took)
	}
	select {
	case <-conn.Done():
	default:
		t.Fatal("the connection is still up after a write timed out")
	}
}

// The same event published twice at once gets both OKs (the relay answers
// each EVENT; a client keyed by event id alone lost one and waited out
// its timeout).
func TestConn_sameEventTwiceAtOnce(t *testing.T) {
	srv, _ := serve(t)
	k := testkit.NewKey(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := relayclient.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), relayclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	evt := note(t, k, "twice")
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- conn.Publish(ctx, evt) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			var refused *relayclient.RefusedError
			if !errors.As(err, &refused) || !strings.HasPrefix(refused.Reason, "duplicate:") {
				t.Errorf("Publish = %v, want nil or a duplicate", err)
			}
		}
	}
}
