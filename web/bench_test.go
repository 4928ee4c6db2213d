package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/relay"
	"github.com/agentnode/agentnode/web"
)

// BenchmarkDirectoryPage serves the directory page (/) of a node holding
// 10,000 definitions and 1,000 agents (bot profiles and heartbeats) from a
// real relay and a real directory, over HTTP on loopback, and reports the
// time to first byte (p50, p90) and the bytes transferred per page:
//
//	go test -tags libsecp256k1 -run '^$' -bench DirectoryPage -benchtime 200x ./web/
func BenchmarkDirectoryPage(b *testing.B) {
	for _, path := range []string{"/", "/?agents=950"} {
		b.Run(path, func(b *testing.B) { benchPage(b, benchNode(b), path) })
	}
}

// BenchmarkBigPages serves / and a definition's page from a node whose
// store holds what issue 21 attacked with: 1,000 definitions of 60 KB
// created in one second, and 200 lessons of 64 KB (also in one second) on
// one definition; it reports TTFB p50/p90 and the page size:
//
//	go test -tags libsecp256k1 -run '^$' -bench BigPages -benchtime 50x ./web/
func BenchmarkBigPages(b *testing.B) {
	srv, target := bigNode(b)
	for _, path := range []string{"/", "/definitions/" + target} {
		b.Run(path[:min(len(path), 16)], func(b *testing.B) { benchPage(b, srv, path) })
	}
}

// bigNode is a node holding the big data set (built once per process).
func bigNode(b *testing.B) (*httptest.Server, string) {
	b.Helper()
	bigOnce.Do(func() {
		ctx := context.Background()
		rel, err := relay.Open(ctx, relay.Config{DataDir: b.TempDir(), Limits: relay.Limits{EventsPerSecond: -1}})
		if err != nil {
			b.Fatal(err)
		}
		at := nostr.Now() - 3600
		big := strings.Repeat("lorem ipsum ", 5000)
		author := nostr.GeneratePrivateKey()
		publishAll(b, rel, 1000, func(i int) *nostr.Event {
			return sign(b, author, nostr.Event{Kind: 4199, CreatedAt: at, Content: fmt.Sprint(i, big),
				Tags: nostr.Tags{{"title", fmt.Sprint("big ", i)}}})
		})
		target := sign(b, author, nostr.Event{Kind: 4199, CreatedAt: at + 1, Tags: nostr.Tags{{"title", "lessons target"}}})
		if err := rel.Publish(ctx, target); err != nil {
			b.Fatal(err)
		}
		lesson := strings.Repeat("x", 65_000)
		publishAll(b, rel, 200, func(i int) *nostr.Event {
			return sign(b, nostr.GeneratePrivateKey(), nostr.Event{Kind: 4129, CreatedAt: at + 2, Content: fmt.Sprint(i, lesson)[:65_000],
				Tags: nostr.Tags{{"e", target.ID}, {"title", fmt.Sprint("lesson ", i)}}})
		})
		dir := directory.New(directory.Config{Source: rel, HeartbeatTTL: time.Hour})
		ran := make(chan error, 1)
		go func() { ran <- dir.Run(ctx) }() // like the node, it runs until the process ends
		select {
		case <-dir.Ready():
		case err := <-ran:
			b.Fatal(err)
		}
		mux := http.NewServeMux()
		web.New(web.Config{Store: rel, Directory: dir}).Mount(mux, rel)
		bigSrv, bigTarget = httptest.NewServer(mux), target.ID
	})
	return bigSrv, bigTarget
}

var (
	benchMu  sync.Mutex
	benchSrv *httptest.Server

	bigOnce   sync.Once
	bigSrv    *httptest.Server
	bigTarget string
)

// benchNode is the populated node's HTTP server (built on first use; it
// lives until the process ends).
func benchNode(b *testing.B) *httptest.Server {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if benchSrv != nil {
		return benchSrv
	}
	ctx := context.Background()
	rel, err := relay.Open(ctx, relay.Config{DataDir: b.TempDir(), Limits: relay.Limits{EventsPerSecond: -1}})
	if err != nil {
		b.Fatal(err)
	}
	defs := populate(b, rel, 10_000, 1_000)
	dir := directory.New(directory.Config{Source: rel, HeartbeatTTL: time.Hour})
	ran := make(chan error, 1)
	go func() { ran <- dir.Run(ctx) }() // like the node, it runs until the process ends
	select {
	case <-dir.Ready():
	case err := <-ran:
		b.Fatal(err)
	}
	site := web.New(web.Config{Store: rel, Directory: dir})
	mux := http.NewServeMux()
	site.Mount(mux, rel)
	benchSrv = httptest.NewServer(mux)
	b.Logf("node: %d definitions, %d agents in the directory", defs, len(dir.Search(directory.Query{IncludeUnavailable: true, Limit: -1})))
	return benchSrv
}

// populate publishes nDefs definitions and nAgents agents (a bot profile
// naming one of the definitions and a heartbeat each), concurrently so
// that the relay's writer commits them in batches.
func populate(b *testing.B, rel *relay.Relay, nDefs, nAgents int) int {
	b.Helper()
	author := nostr.GeneratePrivateKey()
	owner, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	defIDs := make([]string, nDefs)
	publishAll(b, rel, nDefs, func(i int) *nostr.Event {
		evt := sign(b, author, nostr.Event{Kind: 4199, CreatedAt: nostr.Timestamp(1_700_000_000 + i), Tags: nostr.Tags{
			{"title", fmt.Sprintf("Agent definition %d", i)}, {"role", "reviews code, plans trips and answers questions, carefully"},
			{"tool", "read_file"}, {"tool", "http_get"}, {"ver", "1"}}})
		defIDs[i] = evt.ID
		return evt
	})
	publishAll(b, rel, nAgents, func(i int) *nostr.Event {
		sk := nostr.GeneratePrivateKey()
		prof := sign(b, sk, nostr.Event{Kind: 0, Content: fmt.Sprintf(`{"name":"agent %d"}`, i),
			Tags: nostr.Tags{{"bot"}, {"e", defIDs[i%nDefs]}, {"p", owner}}})
		if err := rel.Publish(context.Background(), prof); err != nil {
			b.Fatal(err)
		}
		hb, err := directory.BuildHeartbeat(sk, directory.Status{Capacity: 4, Capabilities: []string{"read_file"}}, time.Now(), 0)
		if err != nil {
			b.Fatal(err)
		}
		return hb
	})
	return nDefs
}

// publishAll publishes build(i) for i < n from 16 goroutines.
func publishAll(b *testing.B, rel *relay.Relay, n int, build func(i int) *nostr.Event) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				if err := rel.Publish(context.Background(), build(i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

func sign(b *testing.B, sk string, evt nostr.Event) *nostr.Event {
	b.Helper()
	if evt.CreatedAt == 0 {
		evt.CreatedAt = nostr.Now()
	}
	if err := evt.Sign(sk); err != nil {
		b.Fatal(err)
	}
	return &evt
}

// benchPage GETs path b.N times and reports the TTFB percentiles and the
// page size.
func benchPage(b *testing.B, srv *httptest.Server, path string) {
	ttfb := make([]time.Duration, 0, b.N)
	var size int64
	b.ResetTimer()
	for range b.N {
		var start, first time.Time
		trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { first = time.Now() }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, srv.URL+path, nil)
		start = time.Now()
		resp, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %s", path, resp.Status)
		}
		ttfb, size = append(ttfb, first.Sub(start)), n
	}
	b.StopTimer()
	slices.Sort(ttfb)
	b.ReportMetric(ms(ttfb[len(ttfb)/2]), "ms-ttfb-p50")
	b.ReportMetric(ms(ttfb[len(ttfb)*9/10]), "ms-ttfb-p90")
	b.ReportMetric(float64(size), "bytes/page")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
