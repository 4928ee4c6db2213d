package hostile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// A client subscribes to everything and never reads its socket. Before the
// fix, the live broadcast wrote to it synchronously and, once its window
// filled, no publisher on any connection got an OK. Now publishers keep
// getting OK and the reader is cut off once its outbound queue passes the
// configured budget.
func TestSlowReader_isCutOffAndNeverStallsPublishers(t *testing.T) {
	const budget = 256 << 10
	n := startNode(t, map[string]any{"max_outbound_bytes": budget, "events_per_second": -1})
	slow := dialRaw(t, n, 4096)
	slow.send(t, "REQ", "all", map[string]any{"limit": 0})
	slow.next(t, 10*time.Second, "EOSE", "all") // subscribed; from now on it never reads

	pub := n.client(t)
	sk := nostr.GeneratePrivateKey()
	content := strings.Repeat("x", 16<<10)
	published := 0
	for i := range 1000 { // 16 MB of live events: past the kernel's socket buffers and the budget
		if _, err := publish(pub, sk, 1, nil, fmt.Sprint(i, content), 10*time.Second); err != nil {
			t.Fatalf("publish %d while a subscriber does not read: %v", i, err)
		}
		published++
	}
	if !n.healthy() {
		t.Fatal("/healthz does not answer")
	}
	// The slow reader finds, behind what its window held, a NOTICE saying
	// why, a close frame, or just the end of the connection; never the
	// whole stream.
	slow.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, reason := 0, ""
	for {
		_, b, err := slow.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				reason = fmt.Sprintf("close %d %s", ce.Code, ce.Text)
			} else if reason == "" {
				reason = err.Error()
			}
			break
		}
		if strings.Contains(string(b), "slow consumer") {
			reason = string(b)
		} else {
			got++
		}
	}
	if got >= published {
		t.Fatalf("the slow reader received all %d events: it was never cut off", got)
	}
	if strings.Contains(reason, "i/o timeout") {
		t.Fatalf("the slow reader's connection is still open (read %d events)", got)
	}
	t.Logf("slow reader cut off after %d of %d events: %s", got, published, reason)
	if _, err := publish(pub, sk, 1, nil, "after", 5*time.Second); err != nil {
		t.Fatalf("publish after the cut-off: %v", err)
	}
}

// One connection pipelines 1,000 COUNT {} and 10,000 REQ limit 500 and
// reads nothing; before the fix each message got its own goroutine and
// query, and RSS went past gigabytes. Now the node's RSS stays bounded,
// /healthz answers throughout and a normal client is served.
func TestPipelinedFloods_keepMemoryBounded(t *testing.T) {
	const rssBound = 256 << 20
	n := startNode(t, map[string]any{"events_per_second": -1, "requests_per_second": -1})
	seed(t, n, 5000)
	before := n.rssBytes(t)

	var peak atomic.Int64
	var unhealthy atomic.Int32
	stop := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if rss := n.rssBytes(t); rss > peak.Load() {
				peak.Store(rss)
			}
			if !n.healthy() {
				unhealthy.Add(1)
			}
		}
	}()
	flood := dialRaw(t, n, 4096)
	flood.SetWriteDeadline(time.Now().Add(60 * time.Second))
	sent := 0
	for i := range 1000 {
		if flood.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `["COUNT","c%d",{}]`, i)) != nil {
			break
		}
		sent++
	}
	for i := range 10000 {
		if flood.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `["REQ","f%d",{"limit":500}]`, i)) != nil {
			break // cut off as a slow consumer: the node closed the connection
		}
		sent++
	}
	// A normal client keeps being served while the flood is handled.
	c := n.client(t)
	sk := nostr.GeneratePrivateKey()
	evt, err := publish(c, sk, 1, nil, "still here", 10*time.Second)
	if err != nil {
		t.Fatalf("publish during the flood: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, err := c.Query(ctx, nostr.Filters{{IDs: []string{evt.ID}}}); err != nil || len(got) != 1 {
		t.Fatalf("query during the flood: %d events, %v", len(got), err)
	}
	flood.Close()
	time.Sleep(2 * time.Second) // let the node finish what the flood left queued, under watch
	close(stop)
	watch.Wait()
	t.Logf("sent %d pipelined messages; RSS before %d MB, peak %d MB", sent, before>>20, peak.Load()>>20)
	if peak.Load() > rssBound {
		t.Errorf("RSS peaked at %d MB, over the %d MB bound", peak.Load()>>20, rssBound>>20)
	}
	if unhealthy.Load() > 0 {
		t.Errorf("/healthz failed %d times during the flood", unhealthy.Load())
	}
}

// seed stores count small events over a few connections.
func seed(t *testing.T, n *node, count int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := n.client(t)
			sk := nostr.GeneratePrivateKey()
			for i := range count / 4 {
				if _, err := publish(c, sk, 1, nostr.Tags{{"t", "seed"}}, fmt.Sprintf("seed %d %d", w, i), 30*time.Second); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("seed: %v", err)
	}
}

// A NIP-50 search of 25,000 words took 1.5 GB and never reached EOSE; now
// it is refused at once with the budget in the reason, and the connection
// keeps working.
func TestHugeSearch_isRefused(t *testing.T) {
	n := startNode(t, nil)
	c := dialRaw(t, n, 0)
	words := strings.TrimSpace(strings.Repeat("agent ", 25000))
	c.send(t, "REQ", "s", map[string]any{"search": words})
	closedWith(t, c.next(t, 10*time.Second, "CLOSED", "s"), "restricted: 25000 words in one search")
	c.send(t, "COUNT", "k", map[string]any{"search": words})
	closedWith(t, c.next(t, 10*time.Second, "CLOSED", "k"), "restricted:")
	c.send(t, "REQ", "ok", map[string]any{"search": "agent", "limit": 1})
	c.next(t, 10*time.Second, "EOSE", "ok")
}

// A REQ whose second filter is refused (kind 1059 needs AUTH) got CLOSED,
// yet its first filter stayed live; now nothing of it stays.
func TestClosedREQ_leavesNoLiveSubscription(t *testing.T) {
	n := startNode(t, nil)
	c := dialRaw(t, n, 0)
	c.send(t, "REQ", "x", map[string]any{"kinds": []int{7777}}, map[string]any{"kinds": []int{1059}})
	closedWith(t, c.next(t, 10*time.Second, "CLOSED", "x"), "auth-required:")
	c.send(t, "REQ", "y", map[string]any{"kinds": []int{7777}, "limit": 0})
	c.next(t, 10*time.Second, "EOSE", "y")

	if _, err := publish(n.client(t), nostr.GeneratePrivateKey(), 7777, nil, "live", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// "y" gets the event; then a fresh REQ's EOSE marks the end of
	// everything the node queued before it: "x" must not appear anywhere.
	seen := readUntil(t, c, "EVENT", "y")
	c.send(t, "REQ", "z", map[string]any{"ids": []string{strings.Repeat("0", 64)}})
	seen = append(seen, readUntil(t, c, "EOSE", "z")...)
	for _, id := range seen {
		if id == "x" {
			t.Fatal(`an event arrived on "x", a subscription answered with CLOSED`)
		}
	}
}

// readUntil reads until label/id and returns the subscription ids of every
// EVENT read on the way (the final one included).
func readUntil(t *testing.T, c rawConn, label, id string) []string {
	t.Helper()
	var subs []string
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for %s %s: %v", label, id, err)
		}
		var msg []string
		jsonStrings(b, &msg)
		if len(msg) > 1 && msg[0] == "EVENT" {
			subs = append(subs, msg[1])
		}
		if len(msg) > 1 && msg[0] == label && msg[1] == id {
			return subs
		}
	}
}

// Subscriptions, filters and values per filter are budgets: over them a
// REQ gets CLOSED with the reason, and the connection goes on.
func TestRequestBudgets_answerClosedWithTheReason(t *testing.T) {
	n := startNode(t, map[string]any{"max_subscriptions": 10, "max_filters": 3, "max_filter_values": 50})
	c := dialRaw(t, n, 0)
	for i := range 10 {
		c.send(t, "REQ", fmt.Sprint("s", i), map[string]any{"kinds": []int{1}, "limit": 0})
		c.next(t, 10*time.Second, "EOSE", fmt.Sprint("s", i))
	}
	c.send(t, "REQ", "s10", map[string]any{"kinds": []int{1}, "limit": 0})
	closedWith(t, c.next(t, 10*time.Second, "CLOSED", "s10"), "rate-limited: too many open subscriptions")
	c.send(t, "REQ", "s3", map[string]any{"kinds": []int{2}, "limit": 0}) // replacing an open one is fine
	c.next(t, 10*time.Second, "EOSE", "s3")
	c.send(t, "CLOSE", "s0")
	c.send(t, "REQ", "s10", map[string]any{"kinds": []int{1}, "limit": 0})
	c.next(t, 10*time.Second, "EOSE", "s10")

	c.send(t, "CLOSE", "s1")
	c.send(t, "REQ", "f", map[string]any{}, map[string]any{}, map[string]any{}, map[string]any{})
	closedWith(t, c.next(t, 10*time.Second, "CLOSED", "f"), "restricted: 4 filters in one request (max 3)")
	authors := make([]string, 51)
	for i := range authors {
		authors[i] = fmt.Sprintf("%064x", i)
	}
	c.send(t, "REQ", "a", map[string]any{"authors": authors})
	closedWith(t, c.next(t, 10*time.Second, "CLOSED", "a"), "restricted: 51 authors in one filter (max 50)")
	c.send(t, "COUNT", "k", map[string]any{"ids": authors})
	closedWith(t, c.next(t, 10*time.Second, "CLOSED", "k"), "restricted: 51 ids")
	c.send(t, "REQ", "fine", map[string]any{"authors": authors[:50], "limit": 1})
	c.next(t, 10*time.Second, "EOSE", "fine")
}

// SIGTERM stops the node within 10 s whatever the clients are doing: here
// subscribers that never read and a connection pipelining queries.
func TestSIGTERM_stopsTheNodeUnderAttack(t *testing.T) {
	n := startNode(t, map[string]any{"events_per_second": -1, "requests_per_second": -1})
	seed(t, n, 2000)
	for range 10 {
		slow := dialRaw(t, n, 4096)
		slow.send(t, "REQ", "all", map[string]any{"limit": 5000})
	}
	flood := dialRaw(t, n, 4096)
	go func() {
		flood.SetWriteDeadline(time.Now().Add(30 * time.Second))
		for i := 0; ; i++ {
			if flood.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `["REQ","f%d",{"limit":500}]`, i)) != nil {
				return
			}
		}
	}()
	time.Sleep(time.Second) // the attack is under way
	took, err := n.terminate(t, 10*time.Second)
	if err != nil {
		t.Fatalf("SIGTERM: %v (after %s)", err, took)
	}
	t.Logf("stopped %s after SIGTERM", took.Round(time.Millisecond))
}
