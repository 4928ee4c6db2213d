package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// QueryFigures are REQ->EOSE latencies of one kind of query, run
// sequentially over one websocket.
type QueryFigures struct {
	Filter      string  `json:"filter"` // the shape of the filters
	Queries     int     `json:"queries"`
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
	MeanResults float64 `json:"mean_results"` // events returned per query
}

// queryRun is one kind of query against one relay: its figures and the
// event ids each query returned (to compare relays).
type queryRun struct {
	figures QueryFigures
	ids     [][]string
}

// warmupQueries are run (and not measured) before each measured series.
const warmupQueries = 10

// Limits of the two queries.
const (
	lessonsLimit = 100
	searchLimit  = 20
)

// lessonsOfDefFilters are n "lessons of a definition" filters on random definitions.
func lessonsOfDefFilters(rng *rand.Rand, defs []*nostr.Event, n int) []nostr.Filter {
	fs := make([]nostr.Filter, n)
	for i := range fs {
		id := defs[rng.IntN(len(defs))].ID
		fs[i] = nostr.Filter{Kinds: []int{kindLesson}, Tags: nostr.TagMap{"e": {id}}, Limit: lessonsLimit}
	}
	return fs
}

// searchDefFilters are n NIP-50 searches over definitions for a random word.
func searchDefFilters(rng *rand.Rand, n int) []nostr.Filter {
	fs := make([]nostr.Filter, n)
	for i := range fs {
		word := vocabulary[rng.IntN(len(vocabulary))]
		fs[i] = nostr.Filter{Kinds: []int{kindDefinition}, Search: word, Limit: searchLimit}
	}
	return fs
}

// runQueries runs warmup then measured over one websocket to url, one REQ
// at a time, timing each from REQ sent to EOSE received.
func runQueries(ctx context.Context, url, shape string, warmup, measured []nostr.Filter) (queryRun, error) {
	ws, err := dial(ctx, url)
	if err != nil {
		return queryRun{}, err
	}
	defer ws.close()
	if _, _, err := timeQueries(ctx, ws, "w", warmup); err != nil {
		return queryRun{}, err
	}
	lat, frames, err := timeQueries(ctx, ws, "q", measured)
	if err != nil {
		return queryRun{}, err
	}
	return summarise(shape, lat, frames)
}

// timeQueries runs filters one by one and returns each latency and the
// EVENT frames each returned.
func timeQueries(ctx context.Context, ws *wsConn, prefix string, filters []nostr.Filter) ([]time.Duration, [][][]byte, error) {
	lat := make([]time.Duration, len(filters))
	frames := make([][][]byte, len(filters))
	for i, f := range filters {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		id := prefix + strconv.Itoa(i)
		start := time.Now()
		if err := ws.req(id, f); err != nil {
			return nil, nil, fmt.Errorf("send REQ: %w", err)
		}
		got, err := ws.readUntilEOSE(id)
		lat[i] = time.Since(start)
		if err != nil {
			return nil, nil, fmt.Errorf("REQ %s: %w", id, err)
		}
		frames[i] = got
		if err := ws.closeSub(id); err != nil {
			return nil, nil, fmt.Errorf("send CLOSE: %w", err)
		}
	}
	return lat, frames, nil
}

// summarise turns latencies and frames into figures and id lists.
func summarise(shape string, lat []time.Duration, frames [][][]byte) (queryRun, error) {
	run := queryRun{ids: make([][]string, len(frames))}
	counts := make([]int, len(frames))
	for i, fr := range frames {
		ids, err := eventIDs(fr)
		if err != nil {
			return queryRun{}, err
		}
		run.ids[i], counts[i] = ids, len(ids)
	}
	run.figures = QueryFigures{Filter: shape, Queries: len(lat),
		P50Ms: percentile(lat, 0.50), P99Ms: percentile(lat, 0.99), MeanResults: mean(counts)}
	return run, nil
}

// sameResults counts the queries whose id lists are equal as sets.
func sameResults(a, b [][]string) int {
	n := 0
	for i := range min(len(a), len(b)) {
		x, y := slices.Clone(a[i]), slices.Clone(b[i])
		slices.Sort(x)
		slices.Sort(y)
		if slices.Equal(x, y) {
			n++
		}
	}
	return n
}
