package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay/internal/lmdbw"
)

// TestDecodeJSON_SameEventAsGoNostr decodes stored records into JSON and
// checks that the JSON and the event built from it are the event that was
// stored (and that the arena's earlier events stay intact as it grows).
func TestDecodeJSON_SameEventAsGoNostr(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	evts := []*nostr.Event{
		signed(t, sk, 1, nil, ""),
		signed(t, sk, 4129, nostr.Tags{{"e", hexID(3)}, {"title", `a "quoted" \ title`}, {"t"}}, "line\nbreak\ttab \x01 ünïcödé </script>"),
		signed(t, sk, 30023, nostr.Tags{{"d", ""}, {"alt", strings.Repeat("x", 300)}}, strings.Repeat("é", 2000)),
	}
	raws := storedRecords(t, evts)
	var arena []byte
	var bodies [][]byte
	var got []*nostr.Event
	for i := range evts {
		raw := raws[i]
		var evt *nostr.Event
		var body []byte
		var err error
		arena, evt, body, err = decodeJSON(arena, raw)
		if err != nil {
			t.Fatal(err)
		}
		bodies, got = append(bodies, body), append(got, evt)
	}
	for i, want := range evts {
		var parsed nostr.Event
		if err := json.Unmarshal(bodies[i], &parsed); err != nil {
			t.Fatalf("%d: %v: %s", i, err, bodies[i])
		}
		for _, e := range []*nostr.Event{&parsed, got[i]} {
			if e.ID != want.ID || e.Content != want.Content || e.Sig != want.Sig || e.PubKey != want.PubKey ||
				e.CreatedAt != want.CreatedAt || e.Kind != want.Kind || !tagsEqual(e.Tags, want.Tags) || !e.CheckID() {
				t.Errorf("%d: got %+v, want %+v", i, e, want)
			}
		}
	}
	if _, _, _, err := decodeJSON(nil, raws[1][:150]); err == nil {
		t.Error("a truncated record decoded without error")
	}
}

// storedRecords saves evts in a real LMDB store and returns each one's raw
// record as the store's reader hands it over, in evts' order.
func storedRecords(t *testing.T, evts []*nostr.Event) [][]byte {
	t.Helper()
	w, err := lmdbw.Open(t.TempDir(), 1<<26)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ops := make([]*lmdbw.Op, len(evts))
	for i, evt := range evts {
		ops[i] = &lmdbw.Op{Action: lmdbw.Save, Event: evt}
	}
	if err := w.Commit(ops); err != nil {
		t.Fatal(err)
	}
	raws := make([][]byte, len(evts))
	for i, evt := range evts {
		err := w.Read(context.Background(), w.Plan(nostr.Filter{IDs: []string{evt.ID}}), 0, math.MaxUint32, func(_ uint32, raw []byte) bool {
			raws[i] = bytes.Clone(raw)
			return false
		})
		if err != nil || raws[i] == nil {
			t.Fatalf("reading %s back: %v", evt.ID, err)
		}
	}
	return raws
}

func tagsEqual(a, b nostr.Tags) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "\x00") != strings.Join(b[i], "\x00") || len(a[i]) != len(b[i]) {
			return false
		}
	}
	return true
}

// decodeJSON appends raw's event as JSON to arena and returns the grown
// arena, the event and its JSON (a capped slice of the arena).
func decodeJSON(arena, raw []byte) (grown []byte, evt *nostr.Event, body []byte, err error) {
	var rd recordDecoder
	rd.d.buf = arena
	evt, body, err = rd.decode(raw)
	return rd.d.buf, evt, body, err
}
