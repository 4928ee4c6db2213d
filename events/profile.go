package events

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// Profile is a kind-0 profile; an agent profile when Bot is set (NIP-AE):
// ["bot"], ["e", <definition id>], ["p", <claimed owner>].
type Profile struct {
	ID        string
	PubKey    string
	CreatedAt nostr.Timestamp

	Bot          bool     // carries a ["bot"] tag
	DefinitionID string   // first "e" (64-hex only)
	Owner        string   // first "p" (64-hex only): the claimed owner
	Owners       []string // every distinct 64-hex "p", in order: older TENEX profiles name each whitelisted pubkey
	Name         string   // Metadata["name"]
	// Metadata is the decoded content; numbers are json.Number so that they
	// survive a round trip unchanged.
	Metadata map[string]any
}

// validateBotProfile holds the rules for a kind 0 that carries ["bot"].
var validateBotProfile = all(
	checkTagNames,
	eachValue("e", IsHex64, ErrBadID, ErrBadID.Error()),
	eachValue("p", IsHex64, ErrBadPubKey, ErrBadPubKey.Error()),
	checkJSONObject,
)

// ParseProfile returns the typed view of a kind-0 event. Bot profiles are
// validated; any profile's content must be a JSON object. On a profile without
// ["bot"], "e" and "p" values that are not 64-hex are ignored.
func ParseProfile(evt *nostr.Event) (*Profile, error) {
	if err := checkKind(evt, KindProfile); err != nil {
		return nil, err
	}
	meta, err := decodeObject(evt.Content)
	if err != nil {
		return nil, invalidBecause(evt.Kind, "content", ErrBadContent, reasonJSONObject)
	}
	name, _ := meta["name"].(string)
	return &Profile{
		ID: evt.ID, PubKey: evt.PubKey, CreatedAt: evt.CreatedAt,
		Bot:          firstTag(evt.Tags, "bot") != nil,
		DefinitionID: hexOrEmpty(valueOf(evt.Tags, "e")),
		Owner:        hexOrEmpty(valueOf(evt.Tags, "p")),
		Owners:       hexValues(evt.Tags, "p"),
		Name:         name,
		Metadata:     meta,
	}, nil
}

// decodeObject decodes a single JSON object, keeping numbers as json.Number.
func decodeObject(s string) (map[string]any, error) {
	if !isJSONObject(s) {
		return nil, ErrBadContent
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// hexValues returns the distinct 64-hex values of the tags named name, in order.
func hexValues(tags nostr.Tags, name string) []string {
	var out []string
	for _, v := range valuesOf(tags, name) {
		if IsHex64(v) {
			out = append(out, v)
		}
	}
	return dedupe(out)
}

// hexOrEmpty returns s when it is 64-hex, else "".
func hexOrEmpty(s string) string {
	if IsHex64(s) {
		return s
	}
	return ""
}

// Template returns the unsigned kind-0 event for p (CreatedAt left to the
// caller). The content is Metadata as JSON with "name" set from Name.
func (p *Profile) Template() nostr.Event {
	tags := nostr.Tags{}
	if p.Bot {
		tags = append(tags, nostr.Tag{"bot"})
	}
	tags = appendOpt(tags, "e", p.DefinitionID)
	tags = appendOpt(tags, "p", p.Owner)
	for _, o := range p.Owners {
		if o != p.Owner {
			tags = append(tags, nostr.Tag{"p", o})
		}
	}
	return nostr.Event{Kind: KindProfile, Tags: tags, Content: p.content()}
}

// content renders Metadata plus Name as a JSON object, without HTML escaping.
func (p *Profile) content() string {
	meta := maps.Clone(p.Metadata)
	if meta == nil {
		meta = map[string]any{}
	}
	if p.Name != "" {
		meta["name"] = p.Name
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(meta); err != nil {
		return nameOnly(p.Name)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// nameOnly is the fallback content when Metadata holds values JSON cannot encode.
func nameOnly(name string) string {
	b, _ := json.Marshal(map[string]string{"name": name})
	return string(b)
}
