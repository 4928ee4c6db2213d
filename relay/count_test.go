package relay

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// COUNT walks the store in one pass; a second holding more events than
// the old 1,000-event pages must still be counted exactly once.
func TestRelay_CountPagesAcrossCrowdedSeconds(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{EventsPerSecond: -1})
	ctx := context.Background()
	sk := nostr.GeneratePrivateKey()
	def := hexID(3)
	crowded := nostr.Now() - 100
	total, tagged, recent := 2700, 0, 0
	for i := range total {
		at := crowded // most events share one second, more than two pages of them
		if i%3 == 0 {
			at = crowded - nostr.Timestamp(i)
		}
		if at >= crowded {
			recent++
		}
		tags := nostr.Tags{{"t", strconv.Itoa(i)}}
		if i%2 == 0 {
			tags = append(tags, nostr.Tag{"e", def})
			tagged++
		}
		evt := &nostr.Event{Kind: 1, Tags: tags, Content: "x", CreatedAt: at}
		evt.Sign(sk)
		if err := tr.Publish(ctx, evt); err != nil {
			t.Fatal(err)
		}
	}
	c := tr.connect(t)
	for _, tc := range []struct {
		name   string
		filter nostr.Filter
		want   int64
	}{
		{"kind", nostr.Filter{Kinds: []int{1}}, int64(total)},
		{"tag", nostr.Filter{Kinds: []int{1}, Tags: nostr.TagMap{"e": {def}}}, int64(tagged)},
		{"author since", nostr.Filter{Authors: []string{mustPub(t, sk)}, Since: &crowded}, int64(recent)},
	} {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		got, _, err := c.Count(cctx, nostr.Filters{tc.filter})
		cancel()
		if err != nil || got != tc.want {
			t.Errorf("%s: COUNT = %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
}

func mustPub(t *testing.T, sk string) string {
	t.Helper()
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	return pk
}
