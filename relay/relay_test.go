package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/testkit"
)

func TestRelay_RefusesMalformedAgentEvents(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	c := tr.connect(t)
	sk := nostr.GeneratePrivateKey()
	cases := []struct {
		name string
		evt  *nostr.Event
	}{
		{"definition without title", signed(t, sk, 4199, nostr.Tags{{"role", "reviewer"}}, "")},
		{"lesson e not 64-hex", signed(t, sk, 4129, nostr.Tags{{"title", "t"}, {"e", "abc"}}, "x")},
		{"lesson with neither title nor content", signed(t, sk, 4129, nostr.Tags{{"e", hexID(1)}}, "")},
		{"comment on lesson, root not an id", signed(t, sk, 1111, nostr.Tags{{"E", "xyz"}, {"e", hexID(1)}, {"k", "4129"}}, "x")},
		{"claims p not a pubkey", signed(t, sk, 14199, nostr.Tags{{"p", "npub-not-hex"}}, "")},
		{"bot profile e not an id", signed(t, sk, 0, nostr.Tags{{"bot"}, {"e", "zz"}}, `{"name":"a"}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := publishWS(t, c, tc.evt)
			if err == nil || !strings.Contains(err.Error(), "invalid: ") {
				t.Fatalf("got %v, want an invalid: refusal", err)
			}
			if got := queryWS(t, c, nostr.Filter{IDs: []string{tc.evt.ID}}); len(got) != 0 {
				t.Fatal("refused event was stored")
			}
		})
	}
}

func TestRelay_AcceptsEveryAgentKind(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	c := tr.connect(t)
	sk := nostr.GeneratePrivateKey()
	def := signed(t, sk, 4199, nostr.Tags{{"title", "Reviewer"}, {"ver", "1"}}, "")
	owner := nostr.GeneratePrivateKey()
	ownerPub, _ := nostr.GetPublicKey(owner)
	agentPub, _ := nostr.GetPublicKey(sk)
	lesson := signed(t, sk, 4129, nostr.Tags{{"title", "t"}, {"category", "c"}, {"e", def.ID}}, "x")
	all := []*nostr.Event{
		def,
		signed(t, sk, 4199, nostr.Tags{{"d", "reviewer"}, {"title", "Reviewer"}, {"e", def.ID, "", "fork"}}, "# Reviewer\nmarkdown"),
		signed(t, sk, 4201, nostr.Tags{{"title", "n"}, {"deny-tool", "shell"}}, "be brief"),
		lesson,
		signed(t, owner, 1111, nostr.Tags{{"E", lesson.ID}, {"K", "4129"}, {"P", agentPub}, {"e", lesson.ID}, {"k", "4129"}, {"p", agentPub}}, "yes"),
		signed(t, sk, 0, nostr.Tags{{"bot"}, {"e", def.ID}, {"p", ownerPub}}, `{"name":"Reviewer"}`),
		signed(t, owner, 14199, nostr.Tags{{"p", agentPub}}, ""),
	}
	for _, evt := range all {
		mustPublish(t, c, evt)
		got := queryWS(t, c, nostr.Filter{IDs: []string{evt.ID}})
		if len(got) != 1 || got[0].Sig != evt.Sig {
			t.Fatalf("kind %d not read back", evt.Kind)
		}
	}
}

// Defect 4: khatru's own "already deleted?" check never matches.
func TestRelay_DeletedEventStaysDeleted(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	c := tr.connect(t)
	sk := nostr.GeneratePrivateKey()
	def := signed(t, sk, 4199, nostr.Tags{{"title", "T"}}, "")
	lesson := signed(t, sk, 4129, nostr.Tags{{"title", "t"}, {"e", def.ID}}, "x")
	mustPublish(t, c, lesson)
	mustPublish(t, c, signed(t, sk, 5, nostr.Tags{{"e", lesson.ID}}, "retracted"))
	if got := queryWS(t, c, nostr.Filter{IDs: []string{lesson.ID}}); len(got) != 0 {
		t.Fatal("deleted lesson still served")
	}
	err := publishWS(t, c, lesson)
	if err == nil || !strings.Contains(err.Error(), "blocked: this event has been deleted") {
		t.Fatalf("re-publish after deletion: got %v", err)
	}
	// A deletion by somebody else neither deletes nor blocks.
	other := nostr.GeneratePrivateKey()
	lesson2 := signed(t, sk, 4129, nostr.Tags{{"title", "t2"}, {"e", def.ID}}, "y")
	mustPublish(t, c, lesson2)
	if err := publishWS(t, c, signed(t, other, 5, nostr.Tags{{"e", lesson2.ID}}, "")); err == nil {
		t.Fatal("foreign deletion accepted")
	}
	if got := queryWS(t, c, nostr.Filter{IDs: []string{lesson2.ID}}); len(got) != 1 {
		t.Fatal("foreign deletion removed the event")
	}
}

func TestRelay_DeletedAddressStaysDeleted(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	c := tr.connect(t)
	sk := nostr.GeneratePrivateKey()
	pub, _ := nostr.GetPublicKey(sk)
	old := signed(t, sk, 30078, nostr.Tags{{"d", "x"}}, "v1")
	old.CreatedAt -= 10
	old.Sign(sk)
	mustPublish(t, c, old)
	mustPublish(t, c, signed(t, sk, 5, nostr.Tags{{"a", "30078:" + pub + ":x"}}, ""))
	if err := publishWS(t, c, old); err == nil || !strings.Contains(err.Error(), "blocked:") {
		t.Fatalf("re-publish of a deleted address version: %v", err)
	}
	newer := signed(t, sk, 30078, nostr.Tags{{"d", "x"}}, "v2")
	newer.CreatedAt += 10
	newer.Sign(sk)
	mustPublish(t, c, newer) // a later version is a new statement, not deleted
}

func TestRelay_InProcessPublishDeletes(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	ctx := context.Background()
	sk := nostr.GeneratePrivateKey()
	lesson := signed(t, sk, 4129, nostr.Tags{{"title", "t"}, {"e", hexID(3)}}, "x")
	if err := tr.Publish(ctx, lesson); err != nil {
		t.Fatal(err)
	}
	if err := tr.Publish(ctx, signed(t, sk, 5, nostr.Tags{{"e", lesson.ID}}, "")); err != nil {
		t.Fatal(err)
	}
	if got, _ := tr.QuerySync(ctx, nostr.Filter{IDs: []string{lesson.ID}}); len(got) != 0 {
		t.Fatal("in-process deletion did not delete")
	}
	err := tr.Publish(ctx, lesson)
	if p, ok := IsRefusal(err); !ok || p != "blocked" {
		t.Fatalf("republish: %v", err)
	}
	bad := signed(t, sk, 4129, nostr.Tags{{"e", hexID(3)}}, "")
	if p, ok := IsRefusal(tr.Publish(ctx, bad)); !ok || p != "invalid" {
		t.Fatal("in-process publish skipped validation")
	}
}

func TestRelay_ReplaceableKeepsNewestOnly(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	c := tr.connect(t)
	owner := nostr.GeneratePrivateKey()
	pub, _ := nostr.GetPublicKey(owner)
	mk := func(delta nostr.Timestamp, agent byte) *nostr.Event {
		e := &nostr.Event{Kind: 14199, CreatedAt: nostr.Now() + delta, Tags: nostr.Tags{{"p", hexID(agent)}}}
		e.Sign(owner)
		return e
	}
	v1, v2, v0 := mk(-10, 1), mk(0, 2), mk(-20, 3)
	mustPublish(t, c, v1)
	mustPublish(t, c, v2)
	publishWS(t, c, v0) // older: ignored (khatru answers OK, nothing replaced)
	got := queryWS(t, c, nostr.Filter{Kinds: []int{14199}, Authors: []string{pub}})
	if len(got) != 1 || got[0].ID != v2.ID {
		t.Fatalf("stored versions = %d, want only the newest", len(got))
	}
}

// Defect 1: lmdb.CountEvents never returns once anything matches.
func TestRelay_CountIsExactAndReturns(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	c := tr.connect(t)
	sk := nostr.GeneratePrivateKey()
	def := hexID(7)
	for i := range 12 {
		mustPublish(t, c, signed(t, sk, 4129, nostr.Tags{{"title", strconv.Itoa(i)}, {"e", def}}, "x"))
	}
	mustPublish(t, c, signed(t, sk, 4129, nostr.Tags{{"title", "other"}, {"e", hexID(8)}}, "x"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, _, err := c.Count(ctx, nostr.Filters{{Kinds: []int{4129}, Tags: nostr.TagMap{"e": {def}}, Limit: 3}})
	if err != nil {
		t.Fatalf("COUNT did not answer: %v", err)
	}
	if n != 12 {
		t.Fatalf("COUNT = %d, want 12 (the limit must not cap a count)", n)
	}
}

// Defect 2: lmdb.CountEventsHLL panics without an HLL cache; and go-nostr's
// HLL offset slices short tag values out of range before any hook runs.
func TestRelay_CountHLLFiltersNeverCrash(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	c := tr.connect(t)
	target := hexID(9)
	for range 3 {
		mustPublish(t, c, signed(t, nostr.GeneratePrivateKey(), 7, nostr.Tags{{"e", target}}, "+"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, hll, err := c.Count(ctx, nostr.Filters{{Kinds: []int{7}, Tags: nostr.TagMap{"e": {target}}}})
	if err != nil || n != 3 || len(hll) == 0 {
		t.Fatalf("reaction COUNT = %d, hll %d bytes, err %v; want 3 with an HLL", n, len(hll), err)
	}
	for _, f := range []nostr.Filter{
		{Kinds: []int{3}, Tags: nostr.TagMap{"p": {"x"}}},
		{Kinds: []int{7}, Tags: nostr.TagMap{"e": {""}}},
	} {
		if _, _, err := c.Count(ctx, nostr.Filters{f}); err != nil {
			t.Fatalf("COUNT %v: %v", f, err)
		}
	}
	// Still alive and serving.
	if got := queryWS(t, c, nostr.Filter{Kinds: []int{7}}); len(got) != 3 {
		t.Fatalf("relay lost its events or died: %d", len(got))
	}
}

func TestRelay_SearchAgentText(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	c := tr.connect(t)
	sk := nostr.GeneratePrivateKey()
	def := signed(t, sk, 4199, nostr.Tags{
		{"title", "Falcon"}, {"description", "reviews pelicans"}, {"role", "ornithologist"},
		{"use-criteria", "when herons appear"}, {"instructions", "secretword"},
	}, "# Notes\nmarkdown about cormorants")
	mustPublish(t, c, def)
	lesson := signed(t, sk, 4129, nostr.Tags{{"title", "albatross handling"}, {"category", "seabirds"}, {"e", def.ID}}, "gannets dive")
	mustPublish(t, c, lesson)
	pub, _ := nostr.GetPublicKey(sk)
	comment := signed(t, sk, 1111, nostr.Tags{{"E", lesson.ID}, {"K", "4129"}, {"P", pub}, {"e", lesson.ID}, {"k", "4129"}, {"p", pub}}, "puffins too")
	mustPublish(t, c, comment)
	cases := map[string]string{
		"falcon": def.ID, "pelicans": def.ID, "ornithologist": def.ID, "herons": def.ID, "cormorants": def.ID,
		"albatross": lesson.ID, "seabirds": lesson.ID, "gannets": lesson.ID, "puffins": comment.ID,
	}
	for word, want := range cases {
		got := queryWS(t, c, nostr.Filter{Search: word})
		if len(got) != 1 || got[0].ID != want {
			t.Errorf("search %q: got %d events, want %s", word, len(got), want[:8])
		}
	}
	if got := queryWS(t, c, nostr.Filter{Search: "pelicans", Kinds: []int{4129}}); len(got) != 0 {
		t.Error("search ignored the kinds filter")
	}
	if got := queryWS(t, c, nostr.Filter{Search: "gannets", Tags: nostr.TagMap{"e": {hexID(1)}}}); len(got) != 0 {
		t.Error("search ignored a tag filter")
	}
}

func TestRelay_Expiration(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	c := tr.connect(t)
	sk := nostr.GeneratePrivateKey()
	past := strconv.FormatInt(int64(nostr.Now())-5, 10)
	err := publishWS(t, c, signed(t, sk, 1, nostr.Tags{{"expiration", past}}, "old"))
	if err == nil || !strings.Contains(err.Error(), "invalid: event has already expired") {
		t.Fatalf("expired event: %v", err)
	}
	soon := signed(t, sk, 1, nostr.Tags{{"expiration", strconv.FormatInt(int64(nostr.Now())+1, 10)}}, "soon")
	mustPublish(t, c, soon)
	testkit.WaitFor(t, 30*time.Second, "the event no longer served after its expiration", func() bool {
		return len(queryWS(t, c, nostr.Filter{IDs: []string{soon.ID}})) == 0
	})
}

func TestRelay_SizeAndRateLimits(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{MaxContentBytes: 100, EventsPerSecond: 1, EventsBurst: 3})
	c := tr.connect(t)
	sk := nostr.GeneratePrivateKey()
	err := publishWS(t, c, signed(t, sk, 1, nil, strings.Repeat("x", 101)))
	if err == nil || !strings.Contains(err.Error(), "invalid: content is 101 bytes") {
		t.Fatalf("oversized content: %v", err)
	}
	var limited error
	for i := range 10 {
		if err := publishWS(t, c, signed(t, sk, 1, nil, strconv.Itoa(i))); err != nil {
			limited = err
			break
		}
	}
	if limited == nil || !strings.Contains(limited.Error(), "rate-limited:") {
		t.Fatalf("burst of 10 at 1/s with burst 3: %v", limited)
	}
}

// nip11Document fetches the relay's NIP-11 document as raw JSON.
func nip11Document(t *testing.T, url string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", "application/nostr+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRelay_NIP11OmitsUnsetOperatorFields: without an operator key the
// document has no "pubkey" at all (nak relay refuses "pubkey": ""), nor
// empty contact, icon or banner; a key that is set is sent.
func TestRelay_NIP11OmitsUnsetOperatorFields(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	var doc map[string]any
	if err := json.Unmarshal(nip11Document(t, tr.srv.URL), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"pubkey", "contact", "icon", "banner"} {
		if v, ok := doc[k]; ok {
			t.Errorf("NIP-11 sends %q: %q with none configured", k, v)
		}
	}
	pk := strings.Repeat("ab", 32)
	tr.SetOperator(Operator{PubKey: pk, Contact: "mailto:op@example.org"})
	doc = nil
	if err := json.Unmarshal(nip11Document(t, tr.srv.URL), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["pubkey"] != pk || doc["contact"] != "mailto:op@example.org" {
		t.Errorf("NIP-11 with an operator: pubkey %v contact %v", doc["pubkey"], doc["contact"])
	}
}

func TestRelay_NIP11TellsTheTruth(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{MaxContentBytes: 1234})
	var doc struct {
		SupportedNIPs []int  `json:"supported_nips"`
		Software      string `json:"software"`
		Version       string `json:"version"`
		Limitation    struct {
			MaxMessageLength int `json:"max_message_length"`
			MaxContentLength int `json:"max_content_length"`
			MaxLimit         int `json:"max_limit"`
		} `json:"limitation"`
	}
	if err := json.Unmarshal(nip11Document(t, tr.srv.URL), &doc); err != nil {
		t.Fatal(err)
	}
	slices.Sort(doc.SupportedNIPs)
	if !slices.Equal(doc.SupportedNIPs, SupportedNIPs) {
		t.Errorf("supported_nips = %v, want exactly %v", doc.SupportedNIPs, SupportedNIPs)
	}
	if doc.Software != SoftwareURL || doc.Version != "test" {
		t.Errorf("software %q version %q", doc.Software, doc.Version)
	}
	if doc.Limitation.MaxContentLength != 1234 || doc.Limitation.MaxMessageLength != DefaultLimits.MaxMessageBytes ||
		doc.Limitation.MaxLimit != DefaultLimits.MaxLimit {
		t.Errorf("limitation = %+v", doc.Limitation)
	}
}

func TestRelay_RestartLosesNothing(t *testing.T) {
	dir := t.TempDir()
	tr := openTestRelay(t, dir, Limits{})
	sk := nostr.GeneratePrivateKey()
	ctx := context.Background()
	var ids []string
	for i := range 30 {
		e := signed(t, sk, 4199, nostr.Tags{{"title", fmt.Sprintf("def%d", i)}, {"description", "persistent kestrel"}}, "")
		if err := tr.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	tr.close()
	tr2 := openTestRelay(t, dir, Limits{})
	got, err := tr2.QuerySync(ctx, nostr.Filter{IDs: ids})
	if err != nil || len(got) != len(ids) {
		t.Fatalf("after restart: %d of %d events (%v)", len(got), len(ids), err)
	}
	found, _ := tr2.QuerySync(ctx, nostr.Filter{Search: "kestrel", Limit: 100})
	if len(found) != len(ids) {
		t.Fatalf("search index after restart: %d of %d", len(found), len(ids))
	}
}

func TestRelay_CloseDisconnectsClients(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	c := tr.connect(t)
	testkit.WaitFor(t, 30*time.Second, "the connection tracked", func() bool { return tr.Connections() == 1 })
	tr.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tr.Relay.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if tr.Connections() != 0 {
		t.Fatal("clients still connected after Close")
	}
	select {
	case <-c.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("client never saw the close")
	}
	if _, err := tr.QuerySync(context.Background(), nostr.Filter{}); err == nil {
		t.Fatal("query after close succeeded")
	}
}

// After a crash the asynchronous search index may lack the newest events;
// without the clean-shutdown marker Open rebuilds it from LMDB.
func TestRelay_SearchIndexRebuiltAfterCrash(t *testing.T) {
	dir := t.TempDir()
	tr := openTestRelay(t, dir, Limits{})
	sk := nostr.GeneratePrivateKey()
	ctx := context.Background()
	for i := range 12 {
		e := signed(t, sk, 4129, nostr.Tags{{"title", fmt.Sprintf("l%d", i)}, {"e", hexID(1)}}, "osprey notes")
		if err := tr.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	tr.close()
	// Simulate a crash that lost the whole index: no marker, no segments.
	if err := os.RemoveAll(filepath.Join(dir, "search")); err != nil {
		t.Fatal(err)
	}
	tr2 := openTestRelay(t, dir, Limits{})
	found, err := tr2.QuerySync(ctx, nostr.Filter{Search: "osprey", Limit: 100})
	if err != nil || len(found) != 12 {
		t.Fatalf("after rebuild: %d of 12 (%v)", len(found), err)
	}
}
