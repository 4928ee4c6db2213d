package replicate_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state/replicate"
)

// TestFigure_IdleTraffic measures, on the wire, what two idle replicas
// (two agents of one owner, 100 shared notes both hold, the default 60 s
// anti-entropy interval) exchange: every byte both websocket connections
// carry through a counting TCP proxy in front of the relay (frames,
// pings, AUTH, REQ, EVENT, OK), and the kind-4290 events the relay
// stores. A figure, not a check: it runs only with AGENTNODE_FIGURES=1,
// for AGENTNODE_FIGURE_MINUTES (default 2) after the replicas agree
// (docs/ASM.md §9.4).
func TestFigure_IdleTraffic(t *testing.T) {
	if os.Getenv("AGENTNODE_FIGURES") == "" {
		t.Skip("figure; set AGENTNODE_FIGURES=1")
	}
	minutes := 2
	fmt.Sscan(os.Getenv("AGENTNODE_FIGURE_MINUTES"), &minutes)
	owner, a1, a2 := newKey(), newKey(), newKey()
	dir := replicate.StaticDirectory{owner.pk: {a1.pk, a2.pk}}
	tr := openRelay(t)
	wire := countingProxy(t, strings.TrimPrefix(tr.URL, "ws://"))
	via := &testRelay{Relay: tr.Relay, URL: "ws://" + wire.addr}
	var stored, storedBytes, digests, digestBytes atomic.Int64
	t.Cleanup(tr.OnStored(func(e *nostr.Event) {
		if e.Kind != 4290 {
			return
		}
		n := int64(len(e.String()))
		stored.Add(1)
		storedBytes.Add(n)
		if e.Tags.FindWithValue("asm", "digest") != nil {
			digests.Add(1)
			digestBytes.Add(n)
		}
	}))
	a := startNode(t, nodeConfig{agent: a1, owner: owner, dir: dir, relays: []*testRelay{via}})
	b := startNode(t, nodeConfig{agent: a2, owner: owner, dir: dir, relays: []*testRelay{via}})
	ca, cb := caller(a1, owner, capTeam), caller(a2, owner, capTeam)
	ctx := context.Background()
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("11111111-1111-4111-8111-%012d", i)
		if _, err := a.rt.Create(ctx, ca, teamURI, note(ids[i], "draft", "Hello", "x")); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		eventually(t, time.Minute, "note "+id+" on b", func() bool { return b.get(cb, teamURI, id) == a.get(ca, teamURI, id) })
	}
	// Both replicators ran their first anti-entropy round at start; the
	// window starts now, on agreeing replicas.
	wire.reset()
	stored.Store(0)
	storedBytes.Store(0)
	digests.Store(0)
	digestBytes.Store(0)
	sa, sb := a.rep.Stats(), b.rep.Stats()
	window := time.Duration(minutes) * time.Minute
	time.Sleep(window) // the measurement window itself: nothing is waited for
	ea, eb := a.rep.Stats(), b.rep.Stats()
	perMin := func(n int64) float64 { return float64(n) / float64(minutes) }
	t.Logf("idle window %s, two replicas, anti-entropy every 60 s (default):", window)
	t.Logf("  wire (both connections, both directions): %d bytes = %.0f bytes/min (client->relay %d, relay->client %d)",
		wire.up.Load()+wire.down.Load(), perMin(wire.up.Load()+wire.down.Load()), wire.up.Load(), wire.down.Load())
	t.Logf("  kind-4290 events stored: %d (%d bytes); digests %d (%d bytes) = %.1f digests/min, %.0f digest bytes/min",
		stored.Load(), storedBytes.Load(), digests.Load(), digestBytes.Load(), perMin(digests.Load()), perMin(digestBytes.Load()))
	t.Logf("  replicators: digests sent %d, received %d, repair events %d, published op events %d",
		ea.DigestsSent-sa.DigestsSent+eb.DigestsSent-sb.DigestsSent, ea.DigestsReceived-sa.DigestsReceived+eb.DigestsReceived-sb.DigestsReceived,
		ea.RepairEvents-sa.RepairEvents+eb.RepairEvents-sb.RepairEvents, ea.Published-sa.Published+eb.Published-sb.Published-(ea.DigestsSent-sa.DigestsSent+eb.DigestsSent-sb.DigestsSent))
}

// wireCounter is a TCP proxy that counts the bytes it forwards.
type wireCounter struct {
	addr     string
	up, down atomic.Int64 // client->target, target->client
}

func (w *wireCounter) reset() { w.up.Store(0); w.down.Store(0) }

func countingProxy(t *testing.T, target string) *wireCounter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &wireCounter{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			wg.Go(func() { copyCounting(out, in, &w.up) })
			wg.Go(func() { copyCounting(in, out, &w.down) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return w
}

func copyCounting(dst, src net.Conn, n *atomic.Int64) {
	buf := make([]byte, 32<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			n.Add(int64(k))
			if _, werr := dst.Write(buf[:k]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}
