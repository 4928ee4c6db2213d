package lmdbw

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// TestViewer_View: a view equals the owned decoding of every record, one
// after the other through the same viewer; a truncated record is an
// error, not a panic.
func TestViewer_View(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	var v Viewer
	for i, tags := range []nostr.Tags{
		nil,
		{{"e", strings.Repeat("ab", 32)}, {"t", "x"}, {"empty"}},
		{{"title", strings.Repeat("long ", 3000)}, {"p", strings.Repeat("cd", 32), "wss://r", "mention"}},
	} {
		evt := &nostr.Event{Kind: 1 + i, CreatedAt: nostr.Timestamp(1000 + i), Tags: tags, Content: strings.Repeat("é\"", i*100)}
		if err := evt.Sign(sk); err != nil {
			t.Fatal(err)
		}
		raw := marshal(evt)
		want, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := v.View(raw)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Tags) == 0 {
			want.Tags = got.Tags[:0:0]
		}
		if !reflect.DeepEqual(*got, *want) {
			t.Fatalf("record %d: view %+v, want %+v", i, got, want)
		}
		if _, err := v.View(raw[: len(raw)-3 : len(raw)-3]); err == nil {
			t.Fatalf("record %d: a truncated record viewed without error", i)
		}
	}
}
