package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// Anyone chooses created_at. A crowd of large events all dated the same
// second, then REQs with limit 1 dated at that second: before the fix
// every query read the whole second, holding each event decoded and as
// JSON, before cutting to its limit (4.4 GB of RSS for 2,000 events of
// 450 KB; here scaled down). Now a query holds at most its limit (and its
// byte ceiling) at any moment, and still answers the lowest id of the
// second, as NIP-01 orders ties.
func TestCrowdedSecond_REQHoldsAtMostItsLimit(t *testing.T) {
	const growthBound = 96 << 20
	n := startNode(t, map[string]any{"events_per_second": -1})
	at := nostr.Now() - 1000
	ids := readsCrowd(t, n, 200, func(i int) *nostr.Event {
		return &nostr.Event{Kind: 1, CreatedAt: at, Content: fmt.Sprint(i, strings.Repeat("c", 60_000)),
			Tags: readsBulkyTags("x", 5, 60_000)}
	})
	slices.Sort(ids)

	c := dialRaw(t, n, 0)
	before := n.readsResetPeak(t)
	for i := range 4 {
		c.send(t, "REQ", fmt.Sprint("q", i), map[string]any{"kinds": []int{1}, "until": at, "limit": 1})
	}
	for _, evt := range c.readsCollect(t, 4, "EVENT") {
		var got nostr.Event
		if err := json.Unmarshal(evt[2], &got); err != nil || got.ID != ids[0] {
			t.Errorf("%s answered %s (%v), want the lowest id of the second %s", evt[1], got.ID, err, ids[0])
		}
	}
	peak := n.readsPeakRSS(t)
	t.Logf("RSS before the queries %d MB, peak during them %d MB", before>>20, peak>>20)
	if peak-before > growthBound {
		t.Errorf("4 REQs of limit 1 grew the node by %d MB (bound %d MB)", (peak-before)>>20, growthBound>>20)
	}
}

// COUNT of a search over a crowd of large definitions, from 8 connections
// at once: before the fix each COUNT read every ranked event back from the
// store and held them all (6.1 GB for 2,000 definitions of 100 KB, 8 x 4
// COUNTs). Now a COUNT holds ids, not events, and answers the same number.
func TestSearchCOUNT_holdsIDsNotEvents(t *testing.T) {
	const defs, growthBound = 300, 64 << 20
	n := startNode(t, map[string]any{"events_per_second": -1, "requests_per_second": -1})
	readsCrowd(t, n, defs, func(i int) *nostr.Event {
		// large in tags the index does not hold, so that indexing them costs little
		return &nostr.Event{Kind: 4199, CreatedAt: nostr.Now(), Content: fmt.Sprint("fill ", i),
			Tags: append(nostr.Tags{{"title", fmt.Sprint("fill ", i)}}, readsBulkyTags("instructions", 2, 50_000)...)}
	})

	conns := make([]rawConn, 8)
	for i := range conns {
		conns[i] = dialRaw(t, n, 0)
	}
	// one COUNT first: the search index commits what it has queued (the
	// indexing's memory is not the attack's)
	conns[0].send(t, "COUNT", "warm", map[string]any{"search": "fill"})
	conns[0].next(t, 60*time.Second, "COUNT", "warm")
	before := n.readsResetPeak(t)
	for _, c := range conns {
		for q := range 4 {
			c.send(t, "COUNT", fmt.Sprint("n", q), map[string]any{"search": "fill"})
		}
	}
	for _, c := range conns {
		for _, msg := range c.readsCollect(t, 4, "COUNT") {
			var res struct{ Count int }
			if err := json.Unmarshal(msg[2], &res); err != nil || res.Count != defs {
				t.Errorf("COUNT search answered %s, want %d", msg[2], defs)
			}
		}
	}
	peak := n.readsPeakRSS(t)
	t.Logf("RSS before the counts %d MB, peak during them %d MB", before>>20, peak>>20)
	if peak-before > growthBound {
		t.Errorf("32 search COUNTs grew the node by %d MB (bound %d MB)", (peak-before)>>20, growthBound>>20)
	}
}

// readsCollect reads messages until it has n labelled label (in any order),
// within a generous deadline, and returns them.
func (c rawConn) readsCollect(t *testing.T, n int, label string) [][]json.RawMessage {
	t.Helper()
	var out [][]json.RawMessage
	for len(out) < n {
		out = append(out, c.next(t, 60*time.Second, label, ""))
	}
	return out
}

// readsCrowd signs count events made by build (one key per worker) and
// publishes them over 4 connections; it returns their ids.
func readsCrowd(t *testing.T, n *node, count int, build func(i int) *nostr.Event) []string {
	t.Helper()
	var mu sync.Mutex
	var ids []string
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := n.client(t)
			sk := nostr.GeneratePrivateKey()
			for i := w; i < count; i += 4 {
				evt := build(i)
				if err := evt.Sign(sk); err != nil {
					errs <- err
					return
				}
				if _, err := readsPublish(c, evt, 30*time.Second); err != nil {
					errs <- fmt.Errorf("publish %d: %w", i, err)
					return
				}
				mu.Lock()
				ids = append(ids, evt.ID)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("publish the crowd: %v", err)
	}
	return ids
}

// readsBulkyTags is count tags named name, each with a value of size bytes.
func readsBulkyTags(name string, count, size int) nostr.Tags {
	tags := make(nostr.Tags, count)
	for i := range tags {
		tags[i] = nostr.Tag{name, fmt.Sprint(i, strings.Repeat("v", size))}
	}
	return tags
}

// readsResetPeak resets the node's peak RSS (VmHWM) to its current RSS, which
// it returns.
func (n *node) readsResetPeak(t *testing.T) int64 {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", n.cmd.Process.Pid), []byte("5"), 0); err != nil {
		t.Fatalf("reset the node's peak RSS: %v", err)
	}
	return n.rssBytes(t)
}

// readsPeakRSS is the node's peak RSS (VmHWM) since start or readsResetPeak.
func (n *node) readsPeakRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.cmd.Process.Pid))
	if err != nil {
		t.Fatalf("read the node's peak RSS: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	t.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// readsPublish publishes a signed event, waiting up to wait for its OK.
func readsPublish(c *relayclient.Conn, evt *nostr.Event, wait time.Duration) (*nostr.Event, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return evt, c.Publish(ctx, evt)
}
