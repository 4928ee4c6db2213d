package events_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

// Every form a definition reference takes, and the error of each bad one.
func TestParseDefinitionRef(t *testing.T) {
	must := mustFor(t)
	pk := testkit.NewKey(t).PK
	id := strings.Repeat("ab", 32)
	npub := must(nip19.EncodePublicKey(pk))
	nprofile := must(nip19.EncodeProfile(pk, []string{"wss://relay.example"}))
	note := must(nip19.EncodeNote(id))
	nevent := must(nip19.EncodeEvent(id, []string{"wss://relay.example"}, pk))
	naddr := must(nip19.EncodeEntity(pk, events.KindDefinition, "writer", []string{"wss://relay.example"}))
	naddrOtherKind := must(nip19.EncodeEntity(pk, 30023, "writer", nil))
	naddrNoIdent := must(nip19.EncodeEntity(pk, 10002, "", nil))
	byID := events.DefinitionRef{ID: id}
	bySlug := events.DefinitionRef{Author: pk, Slug: "writer"}
	hinted := []string{"wss://relay.example"}
	eventRef := events.DefinitionRef{ID: id, Author: pk, Relays: hinted} // an nevent's author and relays ride along
	addrRef := events.DefinitionRef{Author: pk, Slug: "writer", Relays: hinted}
	tests := []struct {
		name, in string
		want     events.DefinitionRef
		wantErr  string // a part of the error; "" for none
	}{
		{"hex id", id, byID, ""},
		{"upper-case hex id", strings.ToUpper(id), byID, ""},
		{"note", note, byID, ""},
		{"nevent", nevent, eventRef, ""},
		{"nostr: nevent, spaced", "  nostr:" + nevent + "\n", eventRef, ""},
		{"naddr of a definition", naddr, addrRef, ""},
		{"nostr: naddr", "nostr:" + naddr, addrRef, ""},
		{"npub:slug", npub + ":writer", bySlug, ""},
		{"hex:slug", pk + ":writer", bySlug, ""},
		{"nprofile:slug", nprofile + ":writer", bySlug, ""},
		{"npub:slug with a colon in the slug", npub + ":a:b", events.DefinitionRef{Author: pk, Slug: "a:b"}, ""},
		{"title with spaces", pk + ":My Writer", events.DefinitionRef{Author: pk, Slug: "My Writer"}, ""},
		{"empty", "", events.DefinitionRef{}, "want nevent1, note1, naddr1 or 64 hex characters"},
		{"garbage", "writer", events.DefinitionRef{}, "(or npub:slug)"},
		{"npub without a slug", npub + ":", events.DefinitionRef{}, "(or npub:slug)"},
		{"bad author before the slug", "npub1nope:writer", events.DefinitionRef{}, "(or npub:slug)"},
		{"npub alone", npub, events.DefinitionRef{}, "want nevent1, note1, naddr1"},
		{"63 hex", id[:63], events.DefinitionRef{}, "want nevent1, note1, naddr1"},
		{"naddr of another kind", naddrOtherKind, events.DefinitionRef{}, "naddr of kind 30023: want a kind-4199 naddr"},
		{"naddr without an identifier", naddrNoIdent, events.DefinitionRef{}, "naddr of kind 10002"},
		{"truncated naddr", naddr[:len(naddr)-1], events.DefinitionRef{}, "want nevent1, note1, naddr1"},
		{"naddr with a one-byte kind (nip19.Decode panics on it)", bech32Encode("naddr", []byte{0, 0, 3, 1, 1}), events.DefinitionRef{}, "want nevent1, note1, naddr1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := events.ParseDefinitionRef(tt.in)
			if tt.wantErr == "" {
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("ParseDefinitionRef(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
				}
				return
			}
			if err == nil || !errors.Is(err, events.ErrBadRef) || !strings.Contains(err.Error(), tt.wantErr) || !reflect.DeepEqual(got, events.DefinitionRef{}) {
				t.Fatalf("ParseDefinitionRef(%q) = %+v, %v; want an ErrBadRef saying %q", tt.in, got, err, tt.wantErr)
			}
		})
	}
}

func TestDefinitionRef_String(t *testing.T) {
	if got := (events.DefinitionRef{ID: "x"}).String(); got != "x" {
		t.Errorf("by id: %q", got)
	}
	if got := (events.DefinitionRef{Author: "a", Slug: "s"}).String(); got != "a:s" {
		t.Errorf("by slug: %q", got)
	}
}
