package relay

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// TestRelay_DifferentialQueries stores thousands of random agent events and
// checks the answers to random filters against filter.Matches over the same
// events (the oracle), in-process and over a websocket.
func TestRelay_DifferentialQueries(t *testing.T) {
	for _, be := range testBackends {
		t.Run(be, func(t *testing.T) { testDifferentialQueries(t, be) })
	}
}

func testDifferentialQueries(t *testing.T, be string) {
	n := 2000
	if testing.Short() {
		n = 400
	}
	tr := openBackendRelay(t, be, Limits{})
	rng := rand.New(rand.NewPCG(1, 2))
	w := newRandomWorld(rng)
	ctx := context.Background()
	var stored []*nostr.Event
	for i := range n {
		evt := w.event(t, i)
		if err := tr.Publish(ctx, evt); err != nil {
			t.Fatalf("event %d kind %d: %v", i, evt.Kind, err)
		}
		stored = append(stored, evt)
	}
	oracle := newestReplaceables(stored)
	c := tr.connect(t)
	for i := range 400 {
		f := w.filter(oracle)
		want := expected(oracle, f)
		got, err := tr.QuerySync(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), want) {
			t.Fatalf("filter %d %v:\n got %d events %v\nwant %d events %v", i, f, len(got), short(ids(got)), len(want), short(want))
		}
		if i%8 == 0 {
			// go-nostr may deliver a subscription's events out of order: compare as sets.
			ws := ids(queryWS(t, c, f))
			slices.Sort(ws)
			sorted := slices.Sorted(slices.Values(want))
			if !slices.Equal(ws, sorted) {
				t.Fatalf("websocket filter %v: got %d, want %d", f, len(ws), len(want))
			}
		}
		if i%20 == 0 {
			cnt, _ := tr.Count(ctx, f)
			if all := expected(oracle, nostr.Filter{IDs: f.IDs, Kinds: f.Kinds, Authors: f.Authors, Tags: f.Tags, Since: f.Since, Until: f.Until, Limit: 1 << 30}); int(cnt) != len(all) {
				t.Fatalf("COUNT %v = %d, want %d", f, cnt, len(all))
			}
		}
	}
}

// randomWorld draws agent events and filters from small pools so that
// filters match often.
type randomWorld struct {
	rng     *rand.Rand
	keys    []string
	pubs    []string
	defIDs  []string
	topics  []string
	base    nostr.Timestamp
	kinds   []int
	created []*nostr.Event
}

func newRandomWorld(rng *rand.Rand) *randomWorld {
	w := &randomWorld{rng: rng, base: nostr.Now() - 100_000, kinds: []int{0, 1, 1111, 4129, 4199, 4201}}
	for range 6 {
		sk := nostr.GeneratePrivateKey()
		pub, _ := nostr.GetPublicKey(sk)
		w.keys, w.pubs = append(w.keys, sk), append(w.pubs, pub)
	}
	for i := range 12 {
		w.defIDs = append(w.defIDs, fmt.Sprintf("%064x", i*7919+1))
	}
	w.topics = []string{"go", "nostr", "review", "tests", "rust"}
	return w
}

func (w *randomWorld) pick(list []string) string { return list[w.rng.IntN(len(list))] }

// event i has created_at base+i, so the newest-first order is total.
func (w *randomWorld) event(t *testing.T, i int) *nostr.Event {
	k := w.rng.IntN(len(w.keys))
	kind := w.kinds[w.rng.IntN(len(w.kinds))]
	var tags nostr.Tags
	switch kind {
	case 0:
		tags = nostr.Tags{{"bot"}, {"e", w.pick(w.defIDs)}, {"p", w.pick(w.pubs)}}
	case 1111:
		root := w.pick(w.defIDs)
		tags = nostr.Tags{{"E", root}, {"K", "4129"}, {"P", w.pick(w.pubs)}, {"e", root}, {"k", "4129"}, {"p", w.pick(w.pubs)}}
	case 4129:
		tags = nostr.Tags{{"title", "lesson " + strconv.Itoa(i)}, {"category", w.pick(w.topics)}, {"e", w.pick(w.defIDs)}}
	case 4199:
		tags = nostr.Tags{{"title", "def " + strconv.Itoa(i)}, {"tool", w.pick(w.topics)}}
	case 4201:
		tags = nostr.Tags{{"title", "nudge"}, {"deny-tool", w.pick(w.topics)}}
	default:
		tags = nostr.Tags{{"p", w.pick(w.pubs)}}
	}
	if w.rng.IntN(3) == 0 {
		tags = append(tags, nostr.Tag{"t", w.pick(w.topics)})
	}
	content := "{}"
	evt := &nostr.Event{Kind: kind, Tags: tags, Content: content, CreatedAt: w.base + nostr.Timestamp(i)}
	if err := evt.Sign(w.keys[k]); err != nil {
		t.Fatal(err)
	}
	w.created = append(w.created, evt)
	return evt
}

func (w *randomWorld) filter(stored []*nostr.Event) nostr.Filter {
	var f nostr.Filter
	if w.rng.IntN(2) == 0 {
		f.Kinds = []int{w.kinds[w.rng.IntN(len(w.kinds))]}
		if w.rng.IntN(3) == 0 {
			f.Kinds = append(f.Kinds, w.kinds[w.rng.IntN(len(w.kinds))])
		}
	}
	if w.rng.IntN(3) == 0 {
		f.Authors = []string{w.pick(w.pubs), w.pick(w.pubs)}
	}
	switch w.rng.IntN(5) {
	case 0:
		f.Tags = nostr.TagMap{"e": {w.pick(w.defIDs)}}
	case 1:
		f.Tags = nostr.TagMap{"p": {w.pick(w.pubs)}}
	case 2:
		f.Tags = nostr.TagMap{"t": {w.pick(w.topics), w.pick(w.topics)}}
	case 3:
		f.Tags = nostr.TagMap{"E": {w.pick(w.defIDs)}, "K": {"4129"}}
	}
	if w.rng.IntN(6) == 0 {
		for range 3 {
			f.IDs = append(f.IDs, stored[w.rng.IntN(len(stored))].ID)
		}
	}
	if w.rng.IntN(3) == 0 {
		s := w.base + nostr.Timestamp(w.rng.IntN(len(w.created)))
		f.Since = &s
	}
	if w.rng.IntN(3) == 0 {
		u := w.base + nostr.Timestamp(w.rng.IntN(len(w.created)))
		f.Until = &u
	}
	f.Limit = []int{5, 50, 400, 4000}[w.rng.IntN(4)]
	return f
}

// newestReplaceables drops the replaced versions of replaceable events, as
// the relay does.
func newestReplaceables(evts []*nostr.Event) []*nostr.Event {
	newest := map[string]*nostr.Event{}
	var out []*nostr.Event
	for _, e := range evts {
		if !nostr.IsReplaceableKind(e.Kind) {
			out = append(out, e)
			continue
		}
		key := strconv.Itoa(e.Kind) + e.PubKey
		if cur, ok := newest[key]; !ok || e.CreatedAt > cur.CreatedAt {
			newest[key] = e
		}
	}
	for _, e := range newest {
		out = append(out, e)
	}
	return out
}

// expected is the oracle: every event filter.Matches, newest first, cut at the limit.
func expected(evts []*nostr.Event, f nostr.Filter) []string {
	var match []*nostr.Event
	for _, e := range evts {
		if f.Matches(e) {
			match = append(match, e)
		}
	}
	slices.SortFunc(match, func(a, b *nostr.Event) int { return int(b.CreatedAt - a.CreatedAt) })
	if f.Limit > 0 && len(match) > f.Limit {
		match = match[:f.Limit]
	}
	return ids(match)
}

func ids(evts []*nostr.Event) []string {
	out := make([]string, len(evts))
	for i, e := range evts {
		out[i] = e.ID
	}
	return out
}

func short(list []string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		out = append(out, s[:6])
	}
	return out
}
