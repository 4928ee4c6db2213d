package hostile

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/testkit"
)

// Anyone chooses created_at: 1,001 bot profiles and 1,001 definitions
// published at one second used to end the directory's start-up load at
// that second, so after a restart the agents published before it vanished
// from / and from search, and the definitions before it lost their titles.
// Now the load pages through the crowded second and loses nothing.
func TestWebDirectory_crowdedSecondLosesNothingOnRestart(t *testing.T) {
	n := startNode(t, map[string]any{"events_per_second": -1})
	crowded := nostr.Now() - 3600
	var evts []*nostr.Event
	// Three older agents whose profiles carry no name: each is listed
	// under its definition's title, which only the directory knows.
	for i := range 3 {
		def := signed(t, nostr.GeneratePrivateKey(), crowded-100, 4199, nostr.Tags{{"title", fmt.Sprintf("olderdef%d", i)}}, "")
		agent := signed(t, nostr.GeneratePrivateKey(), crowded-50, 0, nostr.Tags{{"bot"}, {"e", def.ID}}, "{}")
		named := signed(t, nostr.GeneratePrivateKey(), crowded-50, 0, nostr.Tags{{"bot"}}, fmt.Sprintf(`{"name":"olderagent%d"}`, i))
		evts = append(evts, def, agent, named)
	}
	for i := range 1001 {
		evts = append(evts,
			signed(t, nostr.GeneratePrivateKey(), crowded, 0, nostr.Tags{{"bot"}}, fmt.Sprintf(`{"name":"crowd%d"}`, i)),
			signed(t, nostr.GeneratePrivateKey(), crowded, 4199, nostr.Tags{{"title", fmt.Sprintf("crowddef%d", i)}}, ""))
	}
	marker := signed(t, nostr.GeneratePrivateKey(), crowded+10, 0, nostr.Tags{{"bot"}}, `{"name":"newestmarker"}`)
	publishAllTo(t, n, append(evts, marker))

	n = restartNode(t, n)
	base := "http://" + n.addr
	testkit.WaitFor(t, 60*time.Second, "the directory to load", func() bool {
		return strings.Contains(getBody(t, base+"/search?q=newestmarker"), "newestmarker")
	})
	for i := range 3 {
		for _, q := range []string{fmt.Sprintf("olderagent%d", i), fmt.Sprintf("olderdef%d", i)} {
			if body := getBody(t, base+"/search?q="+q); !agentListed(body, q) {
				t.Errorf("after a restart, search %q lists no agent: the load stopped at the crowded second", q)
			}
		}
	}
	if body := getBody(t, base+"/"); !strings.Contains(body, "Agents <small>(1008)</small>") {
		m := regexp.MustCompile(`Agents <small>\((\d+)\)</small>`).FindStringSubmatch(body)
		t.Errorf("after a restart / lists %v agents, want 1,008 (1,001 crowded, 6 older, the marker)", m)
	}
}

// agentListed reports whether a search page lists an agent named name.
func agentListed(body, name string) bool {
	_, agents, _ := strings.Cut(body, `id="s-agents"`)
	agents, _, _ = strings.Cut(agents, "</section>")
	return strings.Contains(agents, ">"+name+"<")
}

// The directory used to keep every definition whole in memory: after a
// restart over 60 MB of definitions its idle heap held them all. Then the
// pages read whole crowded seconds and rendered every lesson whole: eight
// concurrent GETs of / and sixteen of a definition with 150 lessons of
// 60 KB took the node past a gigabyte and each answer past 9 MB. Now the
// idle heap stays near a fresh node's, every answer is bounded, RSS stays
// bounded and /healthz answers while they run.
//
// HOSTILE_WEB_SCALE=full runs it at the size for the figures in
// docs/WEB.md: 3,200 definitions of 64 KB (200 MB, 100 a second) and 200
// lessons of 64 KB.
func TestWeb_largeStore(t *testing.T) {
	n := startNode(t, map[string]any{"events_per_second": -1})
	crowded := nostr.Now() - 3600
	defs, perSecond, lessons, size := 1000, 1000, 150, 60_000
	if os.Getenv("HOSTILE_WEB_SCALE") == "full" {
		defs, perSecond, lessons, size = 3200, 100, 200, 64_000
	}
	big := strings.Repeat("lorem ipsum ", size/12+1)
	author := nostr.GeneratePrivateKey()
	var evts []*nostr.Event
	for i := range defs {
		at := crowded - nostr.Timestamp(i/perSecond)
		evts = append(evts, signed(t, author, at, 4199, nostr.Tags{{"title", fmt.Sprintf("big %d", i)}}, fmt.Sprint(i, big)[:size]))
	}
	target := signed(t, author, crowded+1, 4199, nostr.Tags{{"title", "lessons target"}}, "")
	evts = append(evts, target)
	for i := range lessons {
		evts = append(evts, signed(t, nostr.GeneratePrivateKey(), crowded+2, 4129,
			nostr.Tags{{"e", target.ID}, {"title", fmt.Sprint("lesson ", i)}}, fmt.Sprint(i, big)[:size]))
	}
	publishAllTo(t, n, evts)
	n = restartNode(t, n)
	base := "http://" + n.addr
	testkit.WaitFor(t, 60*time.Second, "the directory to load", func() bool {
		return strings.Contains(getBody(t, base+"/"), "lessons target")
	})

	t.Run("idleHeapAfterRestart", func(t *testing.T) {
		// The directory's load ends with a collection of its garbage:
		// poll until the heap is down to the bound (the load may still
		// run on a busy CPU), then judge what it holds.
		var heap int64
		deadline := time.Now().Add(60 * time.Second)
		testkit.WaitFor(t, 70*time.Second, "the heap to settle", func() bool {
			heap = metric(t, n, "go_memstats_heap_inuse_bytes")
			return heap <= 40<<20 || time.Now().After(deadline)
		})
		t.Logf("heap in use: %d MB", heap>>20)
		if heap > 40<<20 {
			t.Errorf("idle heap after a restart over %d MB of definitions: %d MB, want at most 40 MB (a fresh node: ~5 MB)", defs*size>>20, heap>>20)
		}
	})
	t.Run("concurrentPagesStayBounded", func(t *testing.T) {
		peak, stop := watchRSS(t, n)
		var wg sync.WaitGroup
		var largest atomic.Int64
		for i := range 24 {
			path := "/"
			if i%3 != 0 {
				path = "/definitions/" + target.ID
			}
			wg.Go(func() {
				size, _ := getSize(base + path)
				for old := largest.Load(); size > old && !largest.CompareAndSwap(old, size); old = largest.Load() {
				}
			})
		}
		slowest := time.Duration(0)
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
				start := time.Now()
				if !n.healthy() {
					t.Errorf("/healthz did not answer within 2 s while the pages were built")
				}
				slowest = max(slowest, time.Since(start))
			}
		}
		stop()
		t.Logf("peak RSS %d MB, largest answer %d kB, slowest /healthz %s", peak()>>20, largest.Load()>>10, slowest)
		if largest.Load() > 1<<20 {
			t.Errorf("largest page: %d kB, want at most 1 MB", largest.Load()>>10)
		}
		if peak() > 400<<20 {
			t.Errorf("peak RSS under 24 concurrent page GETs: %d MB, want at most 400 MB", peak()>>20)
		}
	})
}

// signed builds and signs an event of sk at createdAt.
func signed(t *testing.T, sk string, createdAt nostr.Timestamp, kind int, tags nostr.Tags, content string) *nostr.Event {
	t.Helper()
	evt := &nostr.Event{Kind: kind, Tags: tags, Content: content, CreatedAt: createdAt}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return evt
}

// publishAllTo publishes evts over one connection from 16 goroutines (the
// relay commits them in batches); each must be accepted.
func publishAllTo(t *testing.T, n *node, evts []*nostr.Event) {
	t.Helper()
	c := n.client(t)
	testkit.Parallel(t, len(evts), 16, func(i int) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Publish(ctx, evts[i]); err != nil {
			return fmt.Errorf("publish %d (kind %d): %w", i, evts[i].Kind, err)
		}
		return nil
	})
}

// getBody GETs url and returns the body (up to 64 MB).
func getBody(t *testing.T, url string) string {
	t.Helper()
	c := http.Client{Timeout: 60 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return string(b)
}

// getSize GETs url and returns the size of the body.
func getSize(url string) (int64, int) {
	c := http.Client{Timeout: 120 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	size, _ := io.Copy(io.Discard, resp.Body)
	return size, resp.StatusCode
}

// metric reads one gauge from the node's /metrics.
func metric(t *testing.T, n *node, name string) int64 {
	t.Helper()
	for _, line := range strings.Split(getBody(t, "http://"+n.addr+"/metrics"), "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return int64(f)
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// watchRSS samples the node's RSS every 20 ms until stop is called; peak
// is the largest sample.
func watchRSS(t *testing.T, n *node) (peak func() int64, stop func()) {
	var max atomic.Int64
	quit, done := make(chan struct{}), make(chan struct{})
	pid := n.cmd.Process.Pid
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss := readRSS(pid); rss > max.Load() {
				max.Store(rss)
			}
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { close(quit); <-done }) }
	t.Cleanup(stop)
	return max.Load, stop
}

// readRSS is pid's VmRSS in bytes (0 if unreadable).
func readRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
