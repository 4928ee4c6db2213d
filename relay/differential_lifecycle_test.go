package relay

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/nbd-wtf/go-nostr"
)

// TestRelay_DifferentialLifecycle publishes a seeded random stream of
// regular, replaceable (10002) and addressable (30023) events, searchable
// lessons (4129), out-of-order older versions, NIP-09 deletions by "e" and
// by "a", and re-publishes of deleted events, on each backend, and checks
// it against one sequential oracle (lifecycleOracle): every Publish is
// accepted or refused `blocked:` as the oracle says; then random filters
// (incl. single-word NIP-50 searches, compared as sets: the LMDB mode
// ranks them) must equal the oracle's answer, and COUNT its size.
func TestRelay_DifferentialLifecycle(t *testing.T) {
	n, queries := 1200, 300
	if testing.Short() {
		n, queries = 300, 100
	}
	for _, be := range testBackends {
		t.Run(be, func(t *testing.T) {
			tr := openBackendRelay(t, be, Limits{RequestsPerSecond: -1})
			g := newLifecycle(rand.New(rand.NewPCG(15, 16)))
			ctx := context.Background()
			var blocked, searchHits int
			for i := range n {
				evt := g.next(t, i)
				wantBlocked := g.oracle.publish(evt)
				if wantBlocked {
					blocked++
				}
				err := tr.Publish(ctx, evt)
				if blocked := err != nil && strings.HasPrefix(err.Error(), "blocked:"); blocked != wantBlocked || (err != nil && !blocked) {
					t.Fatalf("publish %d kind %d: err %v, want blocked=%v", i, evt.Kind, err, wantBlocked)
				}
			}
			stored := g.oracle.stored()
			for i := range queries {
				f := g.filter(stored)
				want := lifecycleExpect(stored, f)
				got, err := tr.QuerySync(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				gotIDs := ids(got)
				if f.Search != "" { // ranked in LMDB mode: compare as sets
					searchHits += len(want)
					slices.Sort(gotIDs)
					slices.Sort(want)
				}
				if !slices.Equal(gotIDs, want) {
					t.Fatalf("filter %d %v:\n got %d %v\nwant %d %v", i, f, len(gotIDs), short(gotIDs), len(want), short(want))
				}
				if i%10 == 0 {
					all := f
					all.Limit = 1 << 30
					if cnt, err := tr.Count(ctx, f); err != nil || int(cnt) != len(lifecycleExpect(stored, all)) {
						t.Fatalf("COUNT %v = %d (%v), want %d", f, cnt, err, len(lifecycleExpect(stored, all)))
					}
				}
			}
			t.Logf("%d events published, %d refused as deleted, %d deletions, %d stored; %d search hits", n, blocked, len(g.oracle.dels), len(stored), searchHits)
		})
	}
}

var lifecycleWords = []string{"agent", "relay", "nostr", "lesson", "market", "cheap", "secure", "review"}

// lifecycle draws the event stream.
type lifecycle struct {
	rng    *rand.Rand
	keys   []string
	pubs   []string
	base   nostr.Timestamp
	sent   []*nostr.Event // everything published so far
	oracle *lifecycleOracle
}

func newLifecycle(rng *rand.Rand) *lifecycle {
	g := &lifecycle{rng: rng, base: nostr.Now() - 50_000, oracle: newLifecycleOracle()}
	for range 4 {
		sk := nostr.GeneratePrivateKey()
		pk, _ := nostr.GetPublicKey(sk)
		g.keys, g.pubs = append(g.keys, sk), append(g.pubs, pk)
	}
	return g
}

func (g *lifecycle) word() string { return lifecycleWords[g.rng.IntN(len(lifecycleWords))] }

// next draws event i: mostly new events at base+i*2 (some older, to arrive
// superseded), one in eight a deletion, one in sixteen a re-send.
func (g *lifecycle) next(t *testing.T, i int) *nostr.Event {
	k := g.rng.IntN(len(g.keys))
	roll := g.rng.IntN(16)
	if roll == 0 && len(g.sent) > 0 {
		return g.sent[g.rng.IntN(len(g.sent))] // a re-send (maybe of a deleted event)
	}
	ts := g.base + nostr.Timestamp(i*2)
	if g.rng.IntN(6) == 0 {
		ts -= nostr.Timestamp(g.rng.IntN(60))
	}
	evt := &nostr.Event{CreatedAt: ts, Content: g.word() + " " + g.word()}
	switch {
	case roll <= 2 && len(g.sent) > 0:
		evt.Kind, evt.Content = 5, ""
		evt.Tags = g.deletionTags(k)
	default:
		switch g.rng.IntN(4) {
		case 0:
			evt.Kind = 1
			evt.Tags = nostr.Tags{{"t", g.word()}}
		case 1:
			evt.Kind = 10002
			evt.Tags = nostr.Tags{{"r", "wss://" + g.word() + ".example"}}
		case 2:
			evt.Kind = 30023
			evt.Tags = nostr.Tags{{"d", strconv.Itoa(g.rng.IntN(5))}, {"t", g.word()}}
		case 3:
			evt.Kind = 4129
			evt.Tags = nostr.Tags{{"title", g.word() + " " + g.word()}, {"category", g.word()}, {"e", hexID(byte(g.rng.IntN(4)))}}
		}
	}
	if err := evt.Sign(g.keys[k]); err != nil {
		t.Fatal(err)
	}
	g.sent = append(g.sent, evt)
	return evt
}

// deletionTags name one or two of key k's own published events (by "e"),
// or one of its addresses (by "a"), or an unknown id.
func (g *lifecycle) deletionTags(k int) nostr.Tags {
	var own []*nostr.Event
	for _, e := range g.sent {
		if e.PubKey == g.pubs[k] && e.Kind != 5 {
			own = append(own, e)
		}
	}
	if len(own) == 0 {
		return nostr.Tags{{"e", hexID(9)}}
	}
	target := own[g.rng.IntN(len(own))]
	if g.rng.IntN(3) == 0 && (target.Kind == 10002 || target.Kind == 30023) {
		return nostr.Tags{{"a", strconv.Itoa(target.Kind) + ":" + target.PubKey + ":" + target.Tags.GetD()}}
	}
	tags := nostr.Tags{{"e", target.ID}}
	if g.rng.IntN(2) == 0 {
		tags = append(tags, nostr.Tag{"e", own[g.rng.IntN(len(own))].ID})
	}
	return tags
}

// filter draws a query over the stored events: plain or a one-word search.
func (g *lifecycle) filter(stored []*nostr.Event) nostr.Filter {
	f := nostr.Filter{Limit: []int{3, 20, 1000}[g.rng.IntN(3)]}
	if g.rng.IntN(3) == 0 {
		f.Search, f.Limit = g.word(), 1000
		f.Kinds = []int{4129}
	} else if g.rng.IntN(2) == 0 {
		f.Kinds = []int{[]int{1, 5, 10002, 30023, 4129}[g.rng.IntN(5)]}
	}
	if g.rng.IntN(3) == 0 {
		f.Authors = []string{g.pubs[g.rng.IntN(len(g.pubs))]}
	}
	if g.rng.IntN(4) == 0 {
		f.Tags = nostr.TagMap{"t": {g.word()}}
	}
	if g.rng.IntN(8) == 0 && len(stored) > 0 {
		f.IDs = []string{stored[g.rng.IntN(len(stored))].ID, g.sent[g.rng.IntN(len(g.sent))].ID}
	}
	return f
}

// lifecycleOracle replays NIP-01 replacement and NIP-09 deletion
// sequentially, in memory.
type lifecycleOracle struct {
	byID map[string]*nostr.Event
	dels []*nostr.Event // every stored deletion
}

func newLifecycleOracle() *lifecycleOracle {
	return &lifecycleOracle{byID: map[string]*nostr.Event{}}
}

func addrKey(e *nostr.Event) string {
	return strconv.Itoa(e.Kind) + ":" + e.PubKey + ":" + e.Tags.GetD()
}

func replaceable(e *nostr.Event) bool {
	return nostr.IsReplaceableKind(e.Kind) || nostr.IsAddressableKind(e.Kind)
}

// publish applies evt and reports whether the relay must refuse it
// `blocked:` (a stored deletion covers it).
func (o *lifecycleOracle) publish(evt *nostr.Event) (blocked bool) {
	if _, dup := o.byID[evt.ID]; dup {
		return false
	}
	if evt.Kind == 5 {
		o.dels = append(o.dels, evt)
		o.byID[evt.ID] = evt
		for id, e := range o.byID {
			if e.PubKey == evt.PubKey && id != evt.ID && o.names(evt, e) {
				delete(o.byID, id)
			}
		}
		return false
	}
	for _, d := range o.dels {
		if d.PubKey == evt.PubKey && o.names(d, evt) {
			return true
		}
	}
	if replaceable(evt) {
		for id, e := range o.byID {
			if e.Kind != evt.Kind || e.PubKey != evt.PubKey || addrKey(e) != addrKey(evt) {
				continue
			}
			if e.CreatedAt > evt.CreatedAt || (e.CreatedAt == evt.CreatedAt && e.ID < evt.ID) {
				return false // superseded: accepted, not stored
			}
			delete(o.byID, id)
		}
	}
	o.byID[evt.ID] = evt
	return false
}

// names reports whether deletion d covers e: by id, or by address with
// e no newer than d.
func (o *lifecycleOracle) names(d, e *nostr.Event) bool {
	for _, tag := range d.Tags {
		if len(tag) < 2 {
			continue
		}
		if tag[0] == "e" && tag[1] == e.ID {
			return true
		}
		if tag[0] == "a" && replaceable(e) && tag[1] == addrKey(e) && e.CreatedAt <= d.CreatedAt {
			return true
		}
	}
	return false
}

// stored is the oracle's store.
func (o *lifecycleOracle) stored() []*nostr.Event {
	out := make([]*nostr.Event, 0, len(o.byID))
	for _, e := range o.byID {
		out = append(out, e)
	}
	return out
}

// lifecycleExpect is bruteForce, a search filter keeping the events whose
// searchable text holds its (single) word.
func lifecycleExpect(stored []*nostr.Event, f nostr.Filter) []string {
	if f.Search != "" {
		var hits []*nostr.Event
		for _, e := range stored {
			if searchable(e, f.Search) {
				hits = append(hits, e)
			}
		}
		stored = hits
	}
	return bruteForce(stored, f)
}

// searchable reports whether word is one of the words search sees in e.
func searchable(e *nostr.Event, word string) bool {
	words := strings.FieldsFunc(strings.ToLower(SearchText(e)), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	return slices.Contains(words, word)
}
