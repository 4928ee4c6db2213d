package policies

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip45"
)

// TestHyperLogLogOffset: a filter with a short tag value gets no offset
// (and no panic); every other filter gets go-nostr's.
func TestHyperLogLogOffset(t *testing.T) {
	id := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		filter nostr.Filter
		want   int
	}{
		{nostr.Filter{Kinds: []int{3}, Tags: nostr.TagMap{"p": {"x"}}}, -1},
		{nostr.Filter{Kinds: []int{7}, Tags: nostr.TagMap{"e": {""}}}, -1},
		{nostr.Filter{Kinds: []int{7}, Tags: nostr.TagMap{"e": {id[:32]}}}, -1},
		{nostr.Filter{Kinds: []int{7}, Tags: nostr.TagMap{"e": {id}}}, 18},
		{nostr.Filter{Kinds: []int{3}, Tags: nostr.TagMap{"p": {id}}}, 18},
		{nostr.Filter{Kinds: []int{1}}, -1},
	} {
		if got := HyperLogLogOffset(tc.filter); got != tc.want {
			t.Errorf("HyperLogLogOffset(%v) = %d, want %d", tc.filter, got, tc.want)
		}
		if tc.want != -1 {
			if theirs := nip45.HyperLogLogEventPubkeyOffsetForFilter(tc.filter); theirs != tc.want {
				t.Errorf("go-nostr's offset for %v = %d, want the same %d", tc.filter, theirs, tc.want)
			}
		}
	}
}
