package replicate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/store"
)

func mustKeyring(t *testing.T) *keyring {
	t.Helper()
	k, err := newKeyring(nostr.GeneratePrivateKey())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func testEnvs(owner, agent string, n int) []store.Envelope {
	out := make([]store.Envelope, n)
	for i := range out {
		id := crdt.OpID{Replica: "r1", Counter: uint64(i + 1)}
		out[i] = store.Envelope{Seq: int64(i + 1), Schema: "did:nuwa:state:note#v1", Doc: "d1", Scope: "sc:note",
			Owner: owner, Agent: agent, Action: store.ActionOp,
			Op: crdt.Op{ID: id, TS: crdt.Timestamp{Wall: 1_700_000_000_000 + int64(i), Replica: "r1"}, Kind: crdt.OpSet,
				Key: "title", Value: json.RawMessage(fmt.Sprintf("%q", strings.Repeat("x", i)))}}
	}
	return out
}

func head(owner, vis string) batchHead {
	return batchHead{NS: "cap_note", Schema: "did:nuwa:state:note#v1", Scope: "sc:note", Owner: owner, Vis: vis, Replica: "r1"}
}

func TestSealOpen_PrivateRoundTrip(t *testing.T) {
	author, reader, stranger := mustKeyring(t), mustKeyring(t), mustKeyring(t)
	envs := testEnvs(reader.pk, author.pk, 3)
	batches, _, err := encodeBatches(envs, MaxPlaintext)
	if err != nil || len(batches) != 1 {
		t.Fatal(batches, err)
	}
	evt, err := seal(author, head(reader.pk, "private"), batches[0], reader.pk, nostr.Now())
	if err != nil {
		t.Fatal(err)
	}
	if evt.Kind != Kind || evt.Tags.Find("p")[1] != reader.pk || json.Valid([]byte(evt.Content)) {
		t.Fatalf("sealed event %v %.40s", evt.Tags, evt.Content)
	}
	h, got, err := open(reader, evt)
	if err != nil {
		t.Fatal(err)
	}
	if h.Vis != "private" || h.Owner != reader.pk || len(got) != 3 || got[2].Op.ID.Counter != 3 || got[0].Seq != 0 {
		t.Fatalf("opened %+v %+v", h, got)
	}
	// open decrypts only events whose p names its key: not the author's
	// own copy for someone else (though the symmetric NIP-44 key would open it).
	if _, _, err := open(author, evt); !errors.Is(err, ErrNotForUs) {
		t.Fatalf("author: %v", err)
	}
	if _, _, err := open(stranger, evt); !errors.Is(err, ErrNotForUs) {
		t.Fatalf("stranger: %v", err)
	}
	// Re-addressed to the stranger (and re-signed), the ciphertext still
	// does not open with the stranger's key.
	evt.Tags[len(evt.Tags)-1] = nostr.Tag{"p", stranger.pk}
	evt.Sign(author.sk)
	if _, _, err := open(stranger, evt); !errors.Is(err, ErrUndecryptable) {
		t.Fatalf("stranger decrypting: %v", err)
	}
}

func TestOpen_RefusesBadEvents(t *testing.T) {
	author, reader := mustKeyring(t), mustKeyring(t)
	batches, _, _ := encodeBatches(testEnvs(reader.pk, author.pk, 2), MaxPlaintext)
	good := func() *nostr.Event {
		evt, err := seal(author, head(reader.pk, "private"), batches[0], reader.pk, nostr.Now())
		if err != nil {
			t.Fatal(err)
		}
		return evt
	}
	resign := func(evt *nostr.Event) *nostr.Event { evt.Sign(author.sk); return evt }
	cases := map[string]struct {
		evt  *nostr.Event
		want error
	}{
		"tampered content": {func() *nostr.Event { e := good(); e.Content = flip(e.Content, 20); return e }(), ErrBadEvent},
		"forged signature": {func() *nostr.Event { e := good(); e.Sig = strings.Repeat("0", 128); return e }(), ErrBadEvent},
		"wrong kind":       {resign(func() *nostr.Event { e := good(); e.Kind = 1; return e }()), ErrBadEvent},
		"no owner tag": {resign(func() *nostr.Event {
			e := good()
			e.Tags = slices.DeleteFunc(e.Tags, func(t nostr.Tag) bool { return t[0] == TagOwner })
			return e
		}()), ErrBadEvent},
		"unknown visibility": {resign(func() *nostr.Event { e := good(); e.Tags.Find(TagVis)[1] = "secret"; return e }()), ErrBadEvent},
		"private without reader": {resign(func() *nostr.Event {
			e := good()
			e.Tags = slices.DeleteFunc(e.Tags, func(t nostr.Tag) bool { return t[0] == "p" })
			return e
		}()), ErrBadEvent},
		"garbage ciphertext": {resign(func() *nostr.Event { e := good(); e.Content = "AgAAAA=="; return e }()), ErrUndecryptable},
		"scope tag lies":     {resign(func() *nostr.Event { e := good(); e.Tags.Find(TagScope)[1] = "sc:other"; return e }()), ErrBadEvent},
		"owner tag lies":     {resign(func() *nostr.Event { e := good(); e.Tags.Find(TagOwner)[1] = author.pk; return e }()), ErrBadEvent},
	}
	for name, tc := range cases {
		if _, _, err := open(reader, tc.evt); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", name, err, tc.want)
		}
	}
	if _, _, err := open(reader, good()); err != nil {
		t.Fatal(err)
	}
}

func TestSealOpen_PublicIsPlaintext(t *testing.T) {
	author, anyone := mustKeyring(t), mustKeyring(t)
	batches, _, _ := encodeBatches(testEnvs(author.pk, author.pk, 2), MaxPlaintext)
	evt, err := seal(author, head(author.pk, "public"), batches[0], "", nostr.Now())
	if err != nil {
		t.Fatal(err)
	}
	if evt.Tags.Find("p") != nil || string(batches[0]) != evt.Content {
		t.Fatalf("public event %v %.60s", evt.Tags, evt.Content)
	}
	if _, envs, err := open(anyone, evt); err != nil || len(envs) != 2 {
		t.Fatal(envs, err)
	}
}

func TestEncodeBatches_SplitsAtTheLimit(t *testing.T) {
	envs := testEnvs("o", "a", 60) // titles of 0..59 x's
	const limit = 1500
	batches, tooLarge, err := encodeBatches(envs, limit)
	if err != nil || len(tooLarge) != 0 {
		t.Fatal(tooLarge, err)
	}
	var all []store.Envelope
	for _, b := range batches {
		if len(b) > limit {
			t.Fatalf("batch of %d bytes", len(b))
		}
		var got []store.Envelope
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		all = append(all, got...)
	}
	if len(batches) < 2 || len(all) != len(envs) {
		t.Fatalf("%d batches, %d envelopes", len(batches), len(all))
	}
	for i := range all {
		if all[i].Op.ID != envs[i].Op.ID {
			t.Fatalf("envelope %d out of order", i)
		}
	}
	mixed := testEnvs("o", "a", 3)
	mixed[1].Op.Value = json.RawMessage(fmt.Sprintf("%q", strings.Repeat("y", limit)))
	b, tooLarge, _ := encodeBatches(mixed, limit)
	if len(b) != 1 || len(tooLarge) != 1 || tooLarge[0].Op.ID != mixed[1].Op.ID {
		t.Fatalf("an op over the limit: %d batches, %d too large", len(b), len(tooLarge))
	}
}

func TestReaders(t *testing.T) {
	owner, agent, sibling := mustKeyring(t).pk, mustKeyring(t).pk, mustKeyring(t).pk
	dir := StaticDirectory{owner: {sibling, agent, "not-a-key"}}
	sorted := func(keys ...string) []string { slices.Sort(keys); return keys }
	cases := []struct {
		vis   string
		agent string
		want  []string
	}{
		{"private", agent, sorted(owner, agent)},
		{"private", owner, []string{owner}}, // the owner's own document
		{"shared", agent, sorted(owner, agent, sibling)},
		{"public", agent, nil},
	}
	for _, tc := range cases {
		got, err := readers(context.Background(), dir, tc.vis, store.Envelope{Owner: owner, Agent: tc.agent})
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s/%s: got %v, %v", tc.vis, tc.agent[:4], got, err)
		}
	}
	if _, err := readers(context.Background(), dir, "secret", store.Envelope{Owner: owner}); err == nil {
		t.Error("unknown visibility accepted")
	}
	for who, want := range map[string]bool{owner: true, agent: true, sibling: true, mustKeyring(t).pk: false} {
		if ok, _ := mayWrite(context.Background(), dir, who, owner); ok != want {
			t.Errorf("mayWrite(%.8s) = %v", who, ok)
		}
	}
}

func TestEventFault(t *testing.T) {
	dbErr := errors.New("disk I/O error")
	envErr := fmt.Errorf("%w: op 3@r: %w", store.ErrInvalidEnvelope, errors.New("crdt refused"))
	cases := []struct {
		err  error
		want bool
	}{
		{ErrUntrusted, true},
		{fmt.Errorf("%w: x", ErrBadEvent), true},
		{envErr, true},
		{errors.Join(envErr, fmt.Errorf("%w: s", store.ErrUnknownSchema)), true},
		{dbErr, false},
		{errors.Join(envErr, dbErr), false},
		{fmt.Errorf("store: commit: %w", dbErr), false},
	}
	for _, tc := range cases {
		if got := eventFault(tc.err); got != tc.want {
			t.Errorf("eventFault(%v) = %v", tc.err, got)
		}
	}
}

func TestSeenSet(t *testing.T) {
	var s seenSet
	if !s.add("a") || s.add("a") {
		t.Fatal("a")
	}
	for i := range 2 * seenGeneration {
		s.add(fmt.Sprint(i))
	}
	if !s.add("a") {
		t.Fatal("a is remembered forever")
	}
	s.forget("a")
	if !s.add("a") {
		t.Fatal("forget")
	}
}

// flip changes the character at i.
func flip(s string, i int) string {
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}

// A batch of the default size, sealed for a reader, fits the relays'
// content limit (65,535 bytes); one byte more of plaintext would not.
func TestSeal_FitsTheRelayContentLimit(t *testing.T) {
	author, reader := mustKeyring(t), mustKeyring(t)
	h := batchHead{NS: "cap_x", Schema: "did:nuwa:state:x#v1", Scope: "sc", Owner: author.pk, Vis: "shared", Replica: "r1"}
	for _, tc := range []struct {
		size int
		fits bool
	}{{DefaultMaxBatchBytes, true}, {MaxSealedPlaintext + 1, false}} {
		evt, err := seal(author, h, []byte(strings.Repeat("x", tc.size)), reader.pk, nostr.Now())
		if err != nil {
			t.Fatal(err)
		}
		if fits := len(evt.Content) <= 65535; fits != tc.fits {
			t.Fatalf("%d plaintext bytes seal to %d content bytes (fits: %v, want %v)", tc.size, len(evt.Content), fits, tc.fits)
		}
	}
}
