package peers

import (
	"errors"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

func TestFilterKey(t *testing.T) {
	ts := nostr.Timestamp(1700000000)
	base := nostr.Filter{Kinds: []int{4129, 1111}, Authors: []string{"b", "a"}, Tags: nostr.TagMap{"e": {"y", "x"}, "p": {"z"}}}
	same := []nostr.Filter{
		{Kinds: []int{1111, 4129}, Authors: []string{"a", "b"}, Tags: nostr.TagMap{"p": {"z"}, "e": {"x", "y"}}},
		{Kinds: []int{4129, 1111}, Authors: []string{"b", "a"}, Tags: nostr.TagMap{"e": {"y", "x"}, "p": {"z"}}, Since: &ts, Until: &ts, Limit: 7},
	}
	other := []nostr.Filter{
		{Kinds: []int{4129}, Authors: []string{"a", "b"}, Tags: nostr.TagMap{"e": {"x", "y"}, "p": {"z"}}},
		{Kinds: []int{4129, 1111}, Authors: []string{"a", "b"}, Tags: nostr.TagMap{"e": {"x"}, "p": {"z"}}},
		{Kinds: []int{4129, 1111}, Authors: []string{"a", "b"}, Tags: nostr.TagMap{"E": {"x", "y"}, "p": {"z"}}},
		{Kinds: []int{4129, 1111}, Authors: []string{"a", "b"}, Tags: nostr.TagMap{"e": {"x", "y"}, "p": {"z"}}, Search: "q"},
	}
	want := filterKey(base)
	for i, f := range same {
		if got := filterKey(f); got != want {
			t.Errorf("same[%d]: key %s, want %s", i, got, want)
		}
	}
	for i, f := range other {
		if got := filterKey(f); got == want {
			t.Errorf("other[%d]: key %s equals the base's", i, got)
		}
	}
	if len(base.Authors) != 2 || base.Authors[0] != "b" {
		t.Error("filterKey reordered its argument")
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want outcome
	}{
		{nil, accepted},
		{errors.New("duplicate: already have this event"), accepted},
		{errors.New("msg: duplicate: already have this event"), accepted},
		{errors.New("invalid: signature is invalid"), refused},
		{errors.New("msg: blocked: this event has been deleted"), refused},
		{errors.New("msg: auth-required: restricted kind"), refused},
		{errors.New("msg: rate-limited: slow down, please"), retryLater},
		{errors.New("error: failed to save"), failed},
		{errors.New("context deadline exceeded"), failed},
		{ErrDisconnected, failed},
	} {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestBackoff_Delay(t *testing.T) {
	b := Backoff{Min: 100 * time.Millisecond, Max: 2 * time.Second}
	for n, full := range []time.Duration{100, 200, 400, 800, 1600, 2000, 2000} {
		full *= time.Millisecond
		if n > 4 {
			full = 2 * time.Second
		}
		for range 50 {
			if d := b.Delay(n); d < full/2 || d > full {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", n, d, full/2, full)
			}
		}
	}
	if d := b.Delay(1000); d < time.Second || d > 2*time.Second {
		t.Errorf("Delay(1000) = %v: no overflow past Max", d)
	}
	if d := (Backoff{}).Delay(0); d < DefaultBackoff.Min/2 || d > DefaultBackoff.Min {
		t.Errorf("zero Backoff: Delay(0) = %v", d)
	}
}

func TestVerify(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	evt := &nostr.Event{Kind: 1, Content: "hi", CreatedAt: nostr.Now()}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	verify := func(evt *nostr.Event) error {
		if err := checkID(evt); err != nil {
			return err
		}
		return checkSignature(evt)
	}
	if err := verify(evt); err != nil {
		t.Fatalf("a good event: %v", err)
	}
	badID := *evt
	badID.ID = "00" + evt.ID[2:]
	if err := verify(&badID); !errors.Is(err, ErrBadID) {
		t.Errorf("another id: %v, want ErrBadID", err)
	}
	badSig := *evt
	badSig.Content = "changed"
	badSig.ID = badSig.GetID()
	if err := verify(&badSig); !errors.Is(err, ErrBadSignature) {
		t.Errorf("changed content: %v, want ErrBadSignature", err)
	}
	garbage := *evt
	garbage.Sig = "zz"
	if err := verify(&garbage); !errors.Is(err, ErrBadSignature) {
		t.Errorf("garbage signature: %v, want ErrBadSignature", err)
	}
}

// The recently-seen set holds at most its size: the oldest id goes first.
func TestSeenIDs_ForgetsTheOldest(t *testing.T) {
	s := newSeenIDs(2)
	ids := []string{nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()}
	for _, id := range ids {
		s.add(id)
		s.add(id) // again: no second slot
	}
	if s.has(ids[0]) || !s.has(ids[1]) || !s.has(ids[2]) {
		t.Errorf("after 3 ids in a set of 2: has = %v %v %v, want false true true", s.has(ids[0]), s.has(ids[1]), s.has(ids[2]))
	}
	if s.has("not hex") || len(s.set) != 2 {
		t.Errorf("set of %d ids", len(s.set))
	}
}
