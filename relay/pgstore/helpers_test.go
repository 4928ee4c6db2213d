package pgstore

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/pgtest"
	"github.com/nbd-wtf/go-nostr"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openTestStore opens a store on a fresh database of the test cluster.
func openTestStore(t testing.TB) (*Store, string) {
	t.Helper()
	url := pgtest.URL(t)
	st, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st, url
}

var vocabulary = strings.Fields("agent relay nostr lesson package search query event market cheap fast secure")

// world draws random events and filters from small pools so that filters
// match often.
type world struct {
	rng  *rand.Rand
	sks  []string
	pubs []string
	now  nostr.Timestamp
	ids  []string
}

func newWorld(seed uint64) *world {
	w := &world{rng: rand.New(rand.NewPCG(seed, seed+1)), now: nostr.Now()}
	for range 5 {
		sk := nostr.GeneratePrivateKey()
		pk, _ := nostr.GetPublicKey(sk)
		w.sks, w.pubs = append(w.sks, sk), append(w.pubs, pk)
	}
	return w
}

var worldKinds = []int{0, 1, 1, 1, 7, 1111, 10002, 30023, 30023}

func (w *world) pick(list []string) string { return list[w.rng.IntN(len(list))] }

func (w *world) event(t testing.TB) *nostr.Event {
	k := w.rng.IntN(len(w.sks))
	evt := &nostr.Event{
		PubKey:    w.pubs[k],
		CreatedAt: w.now - nostr.Timestamp(w.rng.IntN(50)),
		Kind:      worldKinds[w.rng.IntN(len(worldKinds))],
		Content:   w.pick(vocabulary) + " " + w.pick(vocabulary),
		Tags:      nostr.Tags{},
	}
	if evt.Kind == 30023 {
		evt.Tags = append(evt.Tags, nostr.Tag{"d", strconv.Itoa(w.rng.IntN(3))})
	}
	for range w.rng.IntN(3) {
		switch w.rng.IntN(4) {
		case 0:
			if len(w.ids) > 0 {
				evt.Tags = append(evt.Tags, nostr.Tag{"e", w.pick(w.ids)})
			}
		case 1:
			evt.Tags = append(evt.Tags, nostr.Tag{"p", w.pick(w.pubs)})
		case 2:
			evt.Tags = append(evt.Tags, nostr.Tag{"t", w.pick(vocabulary)})
		case 3:
			evt.Tags = append(evt.Tags, nostr.Tag{"title", w.pick(vocabulary)})
		}
	}
	switch w.rng.IntN(12) {
	case 0:
		evt.Tags = append(evt.Tags, nostr.Tag{"expiration", strconv.FormatInt(int64(w.now)-100, 10)})
	case 1:
		evt.Tags = append(evt.Tags, nostr.Tag{"expiration", strconv.FormatInt(int64(w.now)+100_000, 10)})
	}
	if err := evt.Sign(w.sks[k]); err != nil {
		t.Fatal(err)
	}
	w.ids = append(w.ids, evt.ID)
	return evt
}

func (w *world) filter() nostr.Filter {
	var f nostr.Filter
	if w.rng.IntN(8) == 0 {
		f.IDs = []string{w.pick(w.ids), w.pick(w.ids)}
	}
	if w.rng.IntN(3) == 0 {
		f.Authors = []string{w.pick(w.pubs)}
	}
	if w.rng.IntN(2) == 0 {
		f.Kinds = []int{worldKinds[w.rng.IntN(len(worldKinds))], worldKinds[w.rng.IntN(len(worldKinds))]}
	}
	switch w.rng.IntN(8) {
	case 0:
		f.Tags = nostr.TagMap{"p": {w.pick(w.pubs)}}
	case 1:
		f.Tags = nostr.TagMap{"t": {w.pick(vocabulary), w.pick(vocabulary)}}
	case 2:
		f.Tags = nostr.TagMap{"e": {w.pick(w.ids)}}
	case 3:
		f.Tags = nostr.TagMap{"d": {"0", "2"}, "t": {w.pick(vocabulary)}}
	case 4:
		f.Tags = nostr.TagMap{"p": {}}
	}
	if w.rng.IntN(4) == 0 {
		s := w.now - nostr.Timestamp(w.rng.IntN(50))
		f.Since = &s
	}
	if w.rng.IntN(4) == 0 {
		u := w.now - nostr.Timestamp(w.rng.IntN(50))
		f.Until = &u
	}
	if w.rng.IntN(6) == 0 {
		f.Search = w.pick(vocabulary)
		if w.rng.IntN(2) == 0 {
			f.Search += " " + w.pick(vocabulary)
		}
	}
	if w.rng.IntN(2) == 0 {
		f.Limit = 1 + w.rng.IntN(30)
	}
	return f
}

// oracle is what a correct store holds, kept by brute force.
type oracle struct{ stored map[string]*nostr.Event }

// save applies NIP-01 replacement and returns the result Save should give.
func (o *oracle) save(evt *nostr.Event) error {
	if _, dup := o.stored[evt.ID]; dup {
		return ErrDuplicate
	}
	if a := address(evt); a != nil {
		for id, old := range o.stored {
			if oa := address(old); oa != nil && *oa == *a {
				if !events.Supersedes(evt, old) {
					return ErrSuperseded
				}
				delete(o.stored, id)
			}
		}
	}
	o.stored[evt.ID] = evt
	return nil
}

// query is the brute-force answer: every live stored event that matches,
// in the relay's order, limited.
func (o *oracle) query(f nostr.Filter, now nostr.Timestamp, limit int) []string {
	var got []*nostr.Event
	for _, evt := range o.stored {
		if exp := expiration(evt); exp != nil && nostr.Timestamp(*exp) <= now {
			continue
		}
		if f.Matches(evt) && searchMatches(f.Search, evt) {
			got = append(got, evt)
		}
	}
	slices.SortFunc(got, relayOrder)
	if limit >= 0 && len(got) > limit {
		got = got[:limit]
	}
	return idsOf(got)
}

func searchMatches(search string, evt *nostr.Event) bool {
	words := strings.Fields(strings.ToLower(searchText(evt)))
	for _, w := range strings.Fields(search) {
		if !slices.Contains(words, w) {
			return false
		}
	}
	return true
}

func relayOrder(a, b *nostr.Event) int {
	if a.CreatedAt != b.CreatedAt {
		return int(b.CreatedAt - a.CreatedAt)
	}
	return strings.Compare(a.ID, b.ID)
}

func idsOf(evts []*nostr.Event) []string {
	out := make([]string, len(evts))
	for i, e := range evts {
		out[i] = e.ID
	}
	return out
}
