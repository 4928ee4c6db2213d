package relay

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// TestRelay_RandomizedQueriesEqualBruteForce stores a seeded random set of
// events — many sharing a created_at second, tags of every index (32-byte
// hex, p, short and long values, non-ASCII and escaped content) — and
// checks seeded random filters against a brute-force scan: every answer
// must be equal to it, order included (newest first, ties by id
// ascending, cut at the limit). Every eighth filter is also asked over a
// raw websocket, whose EVENT frames must carry exactly the stored events
// (ids verified, same order).
func TestRelay_RandomizedQueriesEqualBruteForce(t *testing.T) {
	n, queries := 1500, 600
	if testing.Short() {
		n, queries = 300, 150
	}
	for _, be := range testBackends {
		for _, seed := range []uint64{7, 8} {
			t.Run(be+"/"+strconv.FormatUint(seed, 10), func(t *testing.T) {
				testRandomizedQueries(t, be, seed, n, queries)
			})
		}
	}
}

func testRandomizedQueries(t *testing.T, be string, seed uint64, n, queries int) {
	rng := rand.New(rand.NewPCG(seed, seed*31+1))
	tr := openBackendRelay(t, be, Limits{RequestsPerSecond: -1})
	g := newRandomStore(t, rng, n)
	ctx := context.Background()
	for _, evt := range g.events {
		if err := tr.Publish(ctx, evt); err != nil {
			t.Fatalf("publish kind %d: %v", evt.Kind, err)
		}
	}
	ws, _, err := websocket.DefaultDialer.Dial(tr.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for i := range queries {
		f := g.filter()
		want := bruteForce(g.events, f)
		got, err := tr.QuerySync(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), want) {
			t.Fatalf("filter %d %v:\n got %d %v\nwant %d %v", i, f, len(got), short(ids(got)), len(want), short(want))
		}
		if i%8 == 0 {
			if wire := reqIDs(t, ws, "r"+strconv.Itoa(i), f); !slices.Equal(wire, want) {
				t.Fatalf("websocket filter %d %v:\n got %d %v\nwant %d %v", i, f, len(wire), short(wire), len(want), short(want))
			}
		}
	}
}

// bruteForce is the oracle: every match, newest first, ties by id, cut at the limit.
func bruteForce(evts []*nostr.Event, f nostr.Filter) []string {
	var match []*nostr.Event
	for _, e := range evts {
		if f.Matches(e) {
			match = append(match, e)
		}
	}
	slices.SortFunc(match, func(a, b *nostr.Event) int {
		return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return ids(match[:min(len(match), f.Limit)])
}

// reqIDs sends one REQ on a raw websocket and returns the ids of the EVENT
// frames before EOSE, checking that each frame's event is intact.
func reqIDs(t *testing.T, ws *websocket.Conn, id string, f nostr.Filter) []string {
	t.Helper()
	req, _ := nostr.ReqEnvelope{SubscriptionID: id, Filters: nostr.Filters{f}}.MarshalJSON()
	if err := ws.WriteMessage(websocket.TextMessage, req); err != nil {
		t.Fatal(err)
	}
	var out []string
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("REQ %s: %v", id, err)
		}
		if bytes.HasPrefix(msg, []byte(`["EOSE",`)) {
			close, _ := nostr.CloseEnvelope(id).MarshalJSON()
			ws.WriteMessage(websocket.TextMessage, close)
			return out
		}
		var env []json.RawMessage
		if err := json.Unmarshal(msg, &env); err != nil || len(env) != 3 {
			t.Fatalf("frame %.120s: %v", msg, err)
		}
		var evt nostr.Event
		if err := json.Unmarshal(env[2], &evt); err != nil {
			t.Fatalf("event %.120s: %v", env[2], err)
		}
		if !evt.CheckID() {
			t.Fatalf("event from the wire does not hash to its id: %s", env[2])
		}
		if ok, _ := evt.CheckSignature(); !ok {
			t.Fatalf("event from the wire fails its signature: %s", env[2])
		}
		out = append(out, evt.ID)
	}
}

// randomStore is a seeded random set of signed events and the pools its
// filters draw from.
type randomStore struct {
	rng    *rand.Rand
	keys   []string
	pubs   []string
	refs   []string // 64-hex values for e/E/q tags
	words  []string
	base   nostr.Timestamp
	span   int
	events []*nostr.Event
}

func newRandomStore(t *testing.T, rng *rand.Rand, n int) *randomStore {
	g := &randomStore{rng: rng, base: nostr.Now() - 10_000, span: n / 4,
		words: []string{"go", "nostr", "Ünïcode", `quo"te`, "line\nbreak", "tab\tx", strings.Repeat("long", 30), "a:b:c", "x"}}
	for i := range 5 {
		var b [32]byte
		b[0], b[31] = byte(i+1), byte(rng.Uint32())
		sk := fmt.Sprintf("%x", b)
		pub, _ := nostr.GetPublicKey(sk)
		g.keys, g.pubs = append(g.keys, sk), append(g.pubs, pub)
	}
	for i := range 8 {
		g.refs = append(g.refs, fmt.Sprintf("%016x%048x", uint64(i+1)*0x9e3779b97f4a7c15, i))
	}
	// two refs share their first 8 bytes: the tag index keys only those
	g.refs = append(g.refs, g.refs[0][:16]+strings.Repeat("f", 48))
	for range n {
		g.events = append(g.events, g.event(t))
	}
	return g
}

func (g *randomStore) pick(list []string) string { return list[g.rng.IntN(len(list))] }

// event draws one signed event; about four share each created_at second.
func (g *randomStore) event(t *testing.T) *nostr.Event {
	kinds := []int{1, 7, 16, 1063, 9802, 30023}
	evt := &nostr.Event{Kind: kinds[g.rng.IntN(len(kinds))], CreatedAt: g.base + nostr.Timestamp(g.rng.IntN(g.span)),
		Content: g.pick(g.words) + " " + g.pick(g.words)}
	for range g.rng.IntN(5) {
		switch g.rng.IntN(6) {
		case 0:
			evt.Tags = append(evt.Tags, nostr.Tag{"e", g.pick(g.refs)})
		case 1:
			evt.Tags = append(evt.Tags, nostr.Tag{"p", g.pick(g.pubs)})
		case 2:
			evt.Tags = append(evt.Tags, nostr.Tag{"t", g.pick(g.words)})
		case 3:
			evt.Tags = append(evt.Tags, nostr.Tag{"E", g.pick(g.refs), "wss://x", g.pick(g.words)})
		case 4:
			evt.Tags = append(evt.Tags, nostr.Tag{"title", g.pick(g.words)})
		case 5:
			evt.Tags = append(evt.Tags, nostr.Tag{"k", strconv.Itoa(kinds[g.rng.IntN(len(kinds))])})
		}
	}
	if evt.Kind == 30023 {
		evt.Tags = append(evt.Tags, nostr.Tag{"d", strconv.Itoa(len(g.events))}) // distinct addresses
	}
	if err := evt.Sign(g.pick(g.keys)); err != nil {
		t.Fatal(err)
	}
	return evt
}

// filter draws a filter over the store's pools.
func (g *randomStore) filter() nostr.Filter {
	f := nostr.Filter{Limit: []int{1, 3, 10, 50, 1000}[g.rng.IntN(5)]}
	if g.rng.IntN(10) == 0 {
		for range 1 + g.rng.IntN(4) {
			f.IDs = append(f.IDs, g.events[g.rng.IntN(len(g.events))].ID)
		}
	}
	if g.rng.IntN(2) == 0 {
		for range 1 + g.rng.IntN(2) {
			f.Kinds = append(f.Kinds, []int{1, 7, 16, 1063, 9802, 30023}[g.rng.IntN(6)])
		}
	}
	if g.rng.IntN(3) == 0 {
		for range 1 + g.rng.IntN(2) {
			f.Authors = append(f.Authors, g.pick(g.pubs))
		}
	}
	if g.rng.IntN(2) == 0 {
		f.Tags = nostr.TagMap{}
		for range 1 + g.rng.IntN(2) {
			switch g.rng.IntN(5) {
			case 0:
				f.Tags["e"] = append(f.Tags["e"], g.pick(g.refs))
			case 1:
				f.Tags["p"] = append(f.Tags["p"], g.pick(g.pubs))
			case 2:
				f.Tags["t"] = append(f.Tags["t"], g.pick(g.words))
			case 3:
				f.Tags["E"] = append(f.Tags["E"], g.pick(g.refs))
			case 4:
				f.Tags["k"] = append(f.Tags["k"], "16", "1")
			}
		}
	}
	if g.rng.IntN(3) == 0 {
		s := g.base + nostr.Timestamp(g.rng.IntN(g.span))
		f.Since = &s
	}
	if g.rng.IntN(3) == 0 {
		u := g.base + nostr.Timestamp(g.rng.IntN(g.span))
		f.Until = &u
	}
	return f
}
