package events_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

const capPubKey = "f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9"

const capContent = "metadata:\n  id: did:nuwa:cap:note@1.0.0\n  name: Note\n  description: Personal notes\n" +
	"  triggers:\n    - {type: keyword, value: jot}\nschema: '{}'\ntools:\n  - type: function\n" +
	"    function: {name: fetch_web_content, description: Fetch a page}\n"

// capEvent returns a valid kind-30199 event with its tags edited by edit.
func capEvent(edit func(e *nostr.Event)) *nostr.Event {
	c := events.Capability{Name: "note", Version: "1.0.0", Title: "Note", SchemaURI: "did:nuwa:state:note#v1",
		Tools: []string{"fetch_web_content"}, Topics: []string{"jot"}, Content: capContent}
	e := c.Template()
	e.PubKey = capPubKey
	if edit != nil {
		edit(&e)
	}
	return &e
}

func setCapTag(name string, value ...string) func(e *nostr.Event) {
	return func(e *nostr.Event) {
		for i, t := range e.Tags {
			if t[0] == name {
				e.Tags[i] = append(nostr.Tag{name}, value...)
				return
			}
		}
		e.Tags = append(e.Tags, append(nostr.Tag{name}, value...))
	}
}

func dropCapTag(name string) func(e *nostr.Event) {
	return func(e *nostr.Event) {
		e.Tags = slices.DeleteFunc(e.Tags, func(t nostr.Tag) bool { return t[0] == name })
	}
}

func TestValidateCapability_Refusals(t *testing.T) {
	otherContent := func(content string) func(e *nostr.Event) {
		return func(e *nostr.Event) {
			e.Content = content
			setCapTag("x", events.ContentSHA256(content))(e)
		}
	}
	tests := []struct {
		name    string
		edit    func(e *nostr.Event)
		wantErr error
		wantMsg string
	}{
		{"empty tag name", func(e *nostr.Event) { e.Tags = append(e.Tags, nostr.Tag{}) }, events.ErrBadTag, `kind 30199: tag "": empty tag name`},
		{"empty content", otherContent(" \n"), events.ErrBadContent, `kind 30199: content: empty package`},
		{"two d", func(e *nostr.Event) { e.Tags = append(e.Tags, nostr.Tag{"d", "x@1.0.0"}) }, events.ErrBadTag, `kind 30199: tag "d": more than one`},
		{"no name", dropCapTag("name"), events.ErrMissingTag, `kind 30199: tag "name": required tag missing`},
		{"bad name", setCapTag("name", "no te"), events.ErrBadValue, `kind 30199: tag "name": not a capability name`},
		{"no version", dropCapTag("version"), events.ErrMissingTag, `kind 30199: tag "version": required tag missing`},
		{"bad version", setCapTag("version", "1.0"), events.ErrBadValue, `kind 30199: tag "version": not a semantic version (semver 2.0.0)`},
		{"no d", dropCapTag("d"), events.ErrMissingTag, `kind 30199: tag "d": required tag missing`},
		{"d mismatch", setCapTag("d", "note@1.0.1"), events.ErrBadValue, `kind 30199: tag "d": must be "<name>@<version>" of the name and version tags`},
		{"no x", dropCapTag("x"), events.ErrMissingTag, `kind 30199: tag "x": required tag missing`},
		{"x not hex", setCapTag("x", "abc"), events.ErrBadValue, `kind 30199: tag "x": not a 64-hex sha256`},
		{"x of other content", setCapTag("x", hexID(7)), events.ErrBadValue, `kind 30199: tag "x": not the sha256 of the content`},
		{"no m", dropCapTag("m"), events.ErrMissingTag, `kind 30199: tag "m": required tag missing`},
		{"m json", setCapTag("m", "application/json"), events.ErrBadValue, `kind 30199: tag "m": must be "application/yaml"`},
		{"no schema", dropCapTag("schema"), events.ErrMissingTag, `kind 30199: tag "schema": required tag missing`},
		{"empty schema", setCapTag("schema", " "), events.ErrBadValue, `kind 30199: tag "schema": empty value`},
		{"empty tool", setCapTag("tool"), events.ErrBadValue, `kind 30199: tag "tool": empty value`},
		{"empty t", setCapTag("t", ""), events.ErrBadValue, `kind 30199: tag "t": empty value`},
		{"content not YAML", otherContent("metadata: ["), events.ErrBadContent, `kind 30199: content: not a YAML capability package (metadata.id missing)`},
		{"content without id", otherContent("prompt: hi\n"), events.ErrBadContent, `kind 30199: content: not a YAML capability package (metadata.id missing)`},
		{"content id mismatch", otherContent("metadata:\n  id: did:nuwa:cap:other@1.0.0\n"), events.ErrBadContent, `kind 30199: content: metadata.id is not "did:nuwa:cap:" + the "d" tag`},
		{"signed by someone else", otherContent("metadata:\n  id: did:nuwa:cap:note@1.0.0\n  signature: {pubkey: " + hexID(9) + ", sig: x}\n"),
			events.ErrBadContent, `kind 30199: content: metadata.signature.pubkey is not the event's author`},
	}
	doc := kindsDoc(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(doc, "`"+tt.wantMsg+"`") {
				t.Errorf("docs/KINDS.md does not spell out %s", tt.wantMsg)
			}
			err := events.ValidateCapability(capEvent(tt.edit))
			if err == nil || err.Error() != tt.wantMsg {
				t.Fatalf("got %v\nwant %s", err, tt.wantMsg)
			}
			var verr *events.ValidationError
			if !errors.Is(err, tt.wantErr) || !errors.As(err, &verr) || verr.Kind != events.KindCapability {
				t.Errorf("%#v does not wrap %v as a kind-30199 *ValidationError", err, tt.wantErr)
			}
		})
	}
}

func TestValidateCapability_WrongKind(t *testing.T) {
	err := events.ValidateCapability(&nostr.Event{Kind: 1})
	if !errors.Is(err, events.ErrWrongKind) || err.Error() != "kind 1: kind: want 30199" {
		t.Errorf("got %v", err)
	}
	if !errors.Is(events.ValidateCapability(nil), events.ErrNilEvent) {
		t.Error("nil event")
	}
}

func TestCapability_TemplateRoundTrip(t *testing.T) {
	sk := testkit.NewKey(t).SK
	c := events.Capability{Name: "note", Version: "1.0.0-rc.1+b7", Title: "Note", SchemaURI: "did:nuwa:state:note#v1",
		Tools: []string{"a", "b"}, Topics: []string{"jot"},
		Content: strings.Replace(capContent, "note@1.0.0", "note@1.0.0-rc.1+b7", 1)}
	evt := signed(t, sk, c.Template())
	got, err := events.ParseCapability(evt)
	if err != nil {
		t.Fatal(err)
	}
	if got.D() != "note@1.0.0-rc.1+b7" || got.Title != "Note" || !slices.Equal(got.Tools, c.Tools) ||
		got.SHA256 != events.ContentSHA256(c.Content) || got.PubKey != evt.PubKey || got.Content != c.Content {
		t.Errorf("got %+v", got)
	}
}

func TestIsSemVer(t *testing.T) {
	for v, want := range map[string]bool{
		"1.0.0": true, "0.0.1-alpha.1": true, "10.20.30+build.1-x": true, "1.0.0-0A.is.legal": true,
		"1.0": false, "v1.0.0": false, "01.0.0": false, "1.0.0-01": false, "1.0.0-": false, "": false, "1.0.0 ": false,
	} {
		if got := events.IsSemVer(v); got != want {
			t.Errorf("IsSemVer(%q) = %v", v, got)
		}
	}
}

func TestCapabilitySearchText(t *testing.T) {
	text := events.CapabilitySearchText(capEvent(nil))
	for _, want := range []string{"note", "1.0.0", "Note", "Personal notes", "jot", "fetch_web_content", "Fetch a page"} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("search text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "metadata") || strings.Contains(text, "function") {
		t.Errorf("search text holds YAML keys:\n%s", text)
	}
	hostile := capEvent(func(e *nostr.Event) { e.Content = "metadata: [" })
	if got := events.CapabilitySearchText(hostile); got != "note\n1.0.0\n" {
		t.Errorf("unreadable content: %q", got)
	}
}
