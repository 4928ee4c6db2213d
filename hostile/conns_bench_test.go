package hostile

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// The figures of docs/RELAY.md, "Connections and memory". Run against
// this tree's binary, or set CONNS_BINARY to another build (for example
// main's) to compare; a binary without the connection bounds takes no
// "relay" config (CONNS_BASE=1):
//
//	go test -tags libsecp256k1 -run '^$' -bench 'Idle|Flood' -benchtime 1x ./hostile/
//	CONNS_BASE=1 CONNS_BINARY=/tmp/base-agentnode go test -tags libsecp256k1 -run '^$' -bench 'Idle|Flood' -benchtime 1x ./hostile/

// benchNode starts the node under test for a benchmark with relay config
// cfg (left out for a base binary).
func benchNode(b *testing.B, cfg map[string]any) *node {
	if alt := os.Getenv("CONNS_BINARY"); alt != "" {
		saved := binary
		binary = alt
		b.Cleanup(func() { binary = saved })
	}
	if os.Getenv("CONNS_BASE") != "" {
		cfg = nil
	}
	return startNode(b, cfg)
}

// BenchmarkIdleWebsockets opens 2,000 idle websockets and reports the
// node's RSS growth per connection.
func BenchmarkIdleWebsockets(b *testing.B) {
	const conns = 2000
	for range b.N {
		n := benchNode(b, map[string]any{"max_connections_per_ip": -1})
		before := n.rssBytes(b)
		var open []*websocket.Conn
		for i := range conns {
			c, err := dialQuiet(n, fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250))
			if err != nil {
				b.Fatalf("connection %d: %v", i, err)
			}
			open = append(open, c)
		}
		if !n.healthy() {
			b.Fatal("/healthz does not answer")
		}
		after := n.rssBytes(b)
		b.ReportMetric(float64(after-before)/conns, "RSS-bytes/conn")
		b.ReportMetric(float64(after)/(1<<20), "RSS-MiB")
		for _, c := range open {
			c.Close()
		}
	}
}

// BenchmarkConnectionFlood is item 6 of issue 21: 2 x 10,000 idle
// websockets attempted from two addresses against the defaults; it
// reports the node's peak RSS, the connections it accepted and whether
// /healthz answered throughout.
func BenchmarkConnectionFlood(b *testing.B) {
	const perAddr = 9000 // the test process's own descriptors bound the attack
	for range b.N {
		n := benchNode(b, map[string]any{})
		var peak atomic.Int64
		var unhealthy atomic.Int64
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				if rss := n.rssBytes(b); rss > peak.Load() {
					peak.Store(rss)
				}
				if !n.healthy() {
					unhealthy.Add(1)
				}
			}
		}()
		var accepted atomic.Int64
		var mu sync.Mutex
		var open []*websocket.Conn
		var dials sync.WaitGroup
		for _, addr := range []string{"127.0.0.1", "127.0.0.2"} {
			dials.Add(1)
			go func() {
				defer dials.Done()
				for range perAddr {
					c, err := dialQuiet(n, addr)
					if err != nil {
						continue
					}
					accepted.Add(1)
					mu.Lock()
					open = append(open, c)
					mu.Unlock()
				}
			}()
		}
		dials.Wait()
		healthyAfter := n.healthy()
		cancel()
		wg.Wait()
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(float64(accepted.Load()), "accepted")
		b.ReportMetric(float64(unhealthy.Load()), "healthz-failures")
		if !healthyAfter {
			b.Log("/healthz does not answer after the flood")
		}
		for _, c := range open {
			c.Close()
		}
	}
}

// dialQuiet opens a websocket to n from local, returning the error.
func dialQuiet(n *node, local string) (*websocket.Conn, error) {
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, NetDialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}).DialContext}
	c, resp, err := d.Dial(n.url, nil)
	if resp != nil && resp.Body != nil && err != nil {
		resp.Body.Close()
	}
	return c, err
}

// BenchmarkLargeAnswer is item 5 of issue 21: 300 stored definitions of
// 60 KB (an 18 MB answer, over the 8 MiB outbound budget) asked for by a
// raw websocket that reads as fast as it can. It reports the time to EOSE
// (ns/op), the events received and the node's RSS before the first answer
// (after publishing) and after the last.
func BenchmarkLargeAnswer(b *testing.B) {
	const count, size = 300, 60_000
	n := benchNode(b, map[string]any{"events_per_second": -1})
	publishDefinitions(b, n, count, size)
	before := n.rssBytes(b)
	b.ResetTimer()
	var got int
	for i := range b.N {
		c, err := dialQuiet(n, "127.0.0.1")
		if err != nil {
			b.Fatal(err)
		}
		id := fmt.Sprint("big", i)
		c.WriteJSON([]any{"REQ", id, map[string]any{"kinds": []int{4199}, "limit": count}})
		got, _ = readAnswer(rawConn{c}, id, 60*time.Second)
		c.Close()
	}
	b.StopTimer()
	b.ReportMetric(float64(got), "events")
	b.ReportMetric(float64(before)/(1<<20), "RSS-before-MiB")
	b.ReportMetric(float64(n.rssBytes(b))/(1<<20), "RSS-MiB")
}
