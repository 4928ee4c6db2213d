package events_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// seed is a real-looking event for the fuzz corpora.
type seed struct {
	kind    int
	tags    nostr.Tags
	content string
}

// seeds returns one event of every shape the package handles, good and bad.
func seeds() []seed {
	id, id2, pk, pk2 := hexID(0x4199), hexID(0x4129), "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e", hexID(0xbeef)
	return []seed{
		{4199, nostr.Tags{{"title", "Code Reviewer"}, {"role", "Senior Go reviewer"}, {"instructions", "Review diffs line by line."},
			{"use-criteria", "When a PR needs review"}, {"description", "Reviews Go code"}, {"tool", "read_file"}, {"tool", "grep"},
			{"ver", "2"}, {"image", "https://example.com/reviewer.png"}}, ""},
		{4199, nostr.Tags{{"d", "code-reviewer"}, {"title", "Code Reviewer"}, {"ver", "1.10"},
			{"e", id, "wss://relay.example.com", "file"}, {"e", id2, "", "fork"}, {"e", id}}, "# Code Reviewer\n\nYou review **Go**."},
		{4199, nostr.Tags{{"role", "no title"}, {"ver", ""}, {"e", "xyz", "", "root"}, {"image", "ftp://x"}}, ""},
		{4201, nostr.Tags{{"title", "read only"}, {"only-tool", "read_file"}, {"only-tool", "grep"}}, "Do not modify files."},
		{4201, nostr.Tags{{"allow-tool", "fetch"}, {"deny-tool", "shell"}, {"deny-tool", "fetch"}}, "Be careful."},
		{4129, nostr.Tags{{"title", "Run gofmt first"}, {"category", "style"}, {"e", id}, {"t", "go"}, {"t", "review"}}, "Always gofmt."},
		{4129, nostr.Tags{{"title", "bad ref"}, {"e", "note1xyz"}}, ""},
		{1111, nostr.Tags{{"E", id2, "", pk}, {"K", "4129"}, {"P", pk}, {"e", id2, "", pk}, {"k", "4129"}, {"p", pk}}, "Also run go vet."},
		{1111, nostr.Tags{{"E", id2, "wss://r.example", pk}, {"K", "4129"}, {"P", pk}, {"e", id, "", pk2}, {"k", "1111"}, {"p", pk2}}, "Agreed."},
		{1111, nostr.Tags{{"K", "4129"}, {"e", id2, "", "root", pk}, {"e", id, "", "reply"}, {"p", pk2}}, "legacy reply"},
		{1111, nostr.Tags{{"E", id2}, {"k", "4129"}}, "no K"},
		{1111, nostr.Tags{{"A", "30023:" + pk + ":post"}, {"K", "30023"}, {"a", "30023:" + pk + ":post"}, {"k", "30023"}}, "on an article"},
		{0, nostr.Tags{{"bot"}, {"e", id}, {"p", pk}}, `{"name":"Code Reviewer","about":"I review <Go>","n":1e3}`},
		{0, nostr.Tags{{"bot"}, {"e", "nevent1x"}}, `{"name":"x"}`},
		{0, nostr.Tags{}, `{"name":"alice","picture":"https://example.com/a.jpg"}`},
		{14199, nostr.Tags{{"p", pk}, {"p", pk2}, {"p", pk}, {"alt", "owner claims"}}, ""},
		{14199, nostr.Tags{{"p", "npub1abc"}}, ""},
		{5, nostr.Tags{{"e", id}, {"k", "4129"}}, "retracted"},
		{1, nostr.Tags{{"t", "nostr"}}, "hello"},
	}
}

// addSeeds adds every seed's tags (as JSON) and content; with kind when withKind.
func addSeeds(f *testing.F, withKind bool) {
	for _, s := range seeds() {
		tags, _ := json.Marshal(s.tags)
		if withKind {
			f.Add(s.kind, string(tags), s.content)
		} else {
			f.Add(string(tags), s.content)
		}
	}
}

// fuzzEvent decodes fuzz input into an event, or reports false.
func fuzzEvent(kind int, tagsJSON, content string) (*nostr.Event, bool) {
	var tags nostr.Tags
	if err := json.Unmarshal([]byte(tagsJSON), &tags); err != nil {
		return nil, false
	}
	return &nostr.Event{Kind: kind, Tags: tags, Content: content, PubKey: hexID(1), CreatedAt: testTime}, true
}

// checkRefusal fails t unless err is a well-formed *ValidationError for kind.
func checkRefusal(t *testing.T, kind int, err error) {
	t.Helper()
	var verr *events.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("error is not a *ValidationError: %#v", err)
	}
	if verr.Reason == "" || verr.Err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("kind %d: ", kind)) {
		t.Fatalf("malformed refusal: %#v", verr)
	}
}

func FuzzValidate(f *testing.F) {
	addSeeds(f, true)
	f.Fuzz(func(t *testing.T, kind int, tagsJSON, content string) {
		evt, ok := fuzzEvent(kind, tagsJSON, content)
		if !ok {
			return
		}
		if err := events.Validate(evt); err != nil {
			checkRefusal(t, kind, err)
		}
		if events.IsLessonComment(evt) && evt.Kind != events.KindComment {
			t.Fatal("IsLessonComment on another kind")
		}
	})
}

// fuzzParser checks one parser: no panic, refusals well-formed, and
// Parse -> Template -> Parse reaching a fixed point. exact demands the first
// round trip already be equal; otherwise the second one must be.
func fuzzParser[T any](f *testing.F, kind int, parse func(*nostr.Event) (*T, error), template func(*T) nostr.Event, exact bool) {
	addSeeds(f, false)
	f.Fuzz(func(t *testing.T, tagsJSON, content string) {
		evt, ok := fuzzEvent(kind, tagsJSON, content)
		if !ok {
			return
		}
		v1, err := parse(evt)
		if err != nil {
			checkRefusal(t, kind, err)
			return
		}
		v2 := reparse(t, evt, v1, parse, template)
		if exact && !reflect.DeepEqual(v1, v2) {
			t.Fatalf("round trip changed the value\n got  %+v\n want %+v", v2, v1)
		}
		if v3 := reparse(t, evt, v2, parse, template); !reflect.DeepEqual(v2, v3) {
			t.Fatalf("Template is not stable\n got  %+v\n want %+v", v3, v2)
		}
	})
}

// reparse renders v with template (stamped like evt) and parses it again.
func reparse[T any](t *testing.T, evt *nostr.Event, v *T, parse func(*nostr.Event) (*T, error), template func(*T) nostr.Event) *T {
	t.Helper()
	tmpl := template(v)
	tmpl.ID, tmpl.PubKey, tmpl.CreatedAt = evt.ID, evt.PubKey, evt.CreatedAt
	if err := events.Validate(&tmpl); err != nil {
		t.Fatalf("Template output is refused: %v\n%v", err, tmpl.Tags)
	}
	got, err := parse(&tmpl)
	if err != nil {
		t.Fatalf("Template output does not parse: %v", err)
	}
	return got
}

func FuzzParseDefinition(f *testing.F) {
	// Template writes only what the node interprets (strict out), so the
	// round trip leaves the unread tags behind; the rest must be exact.
	parse := func(evt *nostr.Event) (*events.Definition, error) {
		d, err := events.ParseDefinition(evt)
		if d != nil {
			d.Unread = nil
		}
		return d, err
	}
	fuzzParser(f, events.KindDefinition, parse, (*events.Definition).Template, true)
}

func FuzzParseNudge(f *testing.F) {
	fuzzParser(f, events.KindNudge, events.ParseNudge, (*events.Nudge).Template, true)
}

func FuzzParseLesson(f *testing.F) {
	fuzzParser(f, events.KindLesson, events.ParseLesson, (*events.Lesson).Template, true)
}

// Comments are lenient in and strict out, so only the second round trip is exact.
func FuzzParseComment(f *testing.F) {
	fuzzParser(f, events.KindComment, events.ParseComment, (*events.Comment).Template, false)
}

func FuzzParseProfile(f *testing.F) {
	fuzzParser(f, events.KindProfile, events.ParseProfile, (*events.Profile).Template, true)
}

func FuzzParseOwnerClaims(f *testing.F) {
	fuzzParser(f, events.KindOwnerClaims, events.ParseOwnerClaims, (*events.OwnerClaims).Template, true)
}

// nip19Seeds returns real NIP-19 strings of every prefix, plus near misses.
func nip19Seeds() []string {
	pk, id := vecNpubHex, hexID(0xabc)
	npub, _ := nip19.EncodePublicKey(pk)
	nprofile, _ := nip19.EncodeProfile(pk, []string{"wss://relay.example.com"})
	note, _ := nip19.EncodeNote(id)
	nevent, _ := nip19.EncodeEvent(id, []string{"wss://relay.example.com"}, pk)
	naddr, _ := nip19.EncodeEntity(pk, 30199, "notes@1.0.0", nil)
	claims, _ := nip19.EncodeEntity(pk, 14199, "", nil)
	return []string{npub, nprofile, note, nevent, naddr, claims, vecNpub, vecNsec, vecNprofile,
		"nostr:" + nevent, neventWithKind(id, pk, 4129), pk, strings.ToUpper(id), "", "npub1", naddr[:len(naddr)-1]}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range nip19Seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := events.ParseRef(s)
		switch {
		case err != nil:
			if !errors.Is(err, events.ErrBadRef) {
				t.Fatalf("error does not wrap ErrBadRef: %v", err)
			}
		case r.ID == "" && !events.IsHex64(r.Author):
			t.Fatalf("naddr without an author: %+v", r)
		case r.ID != "" && !events.IsHex64(r.ID):
			t.Fatalf("bad id: %+v", r)
		}
	})
}

func FuzzParsePubKey(f *testing.F) {
	for _, s := range nip19Seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pk, err := events.ParsePubKey(s)
		if err != nil {
			if !errors.Is(err, events.ErrBadPubKey) {
				t.Fatalf("error does not wrap ErrBadPubKey: %v", err)
			}
			return
		}
		if again, err := events.ParsePubKey(pk); !events.IsHex64(pk) || err != nil || again != pk {
			t.Fatalf("ParsePubKey(%q) = %q, not a fixed point", s, pk)
		}
	})
}

func FuzzParseSecretKey(f *testing.F) {
	for _, s := range nip19Seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sk, err := events.ParseSecretKey(s)
		if err != nil {
			if !errors.Is(err, events.ErrBadSecretKey) {
				t.Fatalf("error does not wrap ErrBadSecretKey: %v", err)
			}
			if len(s) >= 16 && strings.Contains(err.Error(), s) {
				t.Fatalf("error echoes the input")
			}
			return
		}
		if _, err := nostr.GetPublicKey(sk); !events.IsHex64(sk) || err != nil {
			t.Fatalf("ParseSecretKey(...) = unusable key %q", sk)
		}
	})
}

// FuzzLatestDefinitions: one result per key, none beaten by an input, and the
// result does not depend on input order. Input: lines "pk|slug|title|ver|t|id".
func FuzzLatestDefinitions(f *testing.F) {
	f.Add("a||W|1|10|x\na||W|2|10|y\na|w|W|10|10|z\nb||W|beta|5|q\nb||W|1.0|5|r\nb||W|1|5|s")
	f.Add("a||W|9|1|x\na||W|10|1|y\na||W|1x|1|z")
	f.Fuzz(func(t *testing.T, in string) {
		defs := fuzzDefinitions(in)
		got := events.LatestDefinitions(defs)
		checkLatest(t, defs, got)
		rev := slices.Clone(defs)
		slices.Reverse(rev)
		if again := events.LatestDefinitions(rev); !reflect.DeepEqual(got, again) {
			t.Fatalf("result depends on input order:\n%v\n%v", got, again)
		}
	})
}

// fuzzDefinitions decodes "pk|slug|title|ver|t|id" lines into definitions.
// The line number is appended to the id: distinct events have distinct ids.
func fuzzDefinitions(in string) []*events.Definition {
	var defs []*events.Definition
	for i, line := range strings.Split(in, "\n") {
		f := strings.SplitN(line, "|", 6)
		if len(f) < 6 {
			continue
		}
		at := nostr.Timestamp(len(f[4]))
		defs = append(defs, &events.Definition{PubKey: f[0], Slug: f[1], Title: f[2], Version: f[3], CreatedAt: at, ID: f[5] + "#" + strconv.Itoa(i)})
	}
	return defs
}

// checkLatest fails t unless got has one definition per key of defs, sorted.
func checkLatest(t *testing.T, defs, got []*events.Definition) {
	keys := map[string]bool{}
	for _, d := range defs {
		keys[d.Key()] = true
	}
	if len(got) != len(keys) {
		t.Fatalf("%d results for %d keys", len(got), len(keys))
	}
	for i, d := range got {
		if i > 0 && got[i-1].Key() >= d.Key() {
			t.Fatalf("not sorted by key at %d", i)
		}
		for _, o := range defs {
			if o.Key() == d.Key() && o.CreatedAt > d.CreatedAt {
				t.Fatalf("%+v beaten by newer %+v", d, o)
			}
		}
	}
}

// FuzzMergeClaims: removed agents are gone, kept ones keep their order, no repeats.
func FuzzMergeClaims(f *testing.F) {
	f.Add("a,b,c", "d,a", "b")
	f.Add("", "a,a", "a")
	f.Fuzz(func(t *testing.T, latest, add, remove string) {
		split := func(s string) []string { return strings.Split(s, ",") }
		prev := &events.OwnerClaims{Agents: split(latest), Extra: nostr.Tags{{"alt", latest}}}
		got := events.MergeClaims(prev, split(add), split(remove))
		seen := map[string]bool{}
		for _, a := range got.Agents {
			if seen[a] || slices.Contains(split(remove), a) {
				t.Fatalf("repeated or removed agent %q in %v", a, got.Agents)
			}
			seen[a] = true
		}
		for _, a := range append(split(latest), split(add)...) {
			if !seen[a] && !slices.Contains(split(remove), a) {
				t.Fatalf("lost agent %q", a)
			}
		}
		if !reflect.DeepEqual(got.Extra, prev.Extra) {
			t.Fatalf("Extra not kept: %v", got.Extra)
		}
	})
}
