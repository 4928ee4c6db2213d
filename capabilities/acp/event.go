package acp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// EventTemplate returns the unsigned kind-30199 event that publishes p:
// content = p.Raw byte for byte; d = <name>@<version>; tags name, version,
// title, x, m, schema, one tool per tool, one t per keyword trigger, alt.
// CreatedAt is left to the caller.
func EventTemplate(p *Package) nostr.Event {
	c := events.Capability{
		Name: p.Name(), Version: p.Version(), Title: p.Metadata.Name,
		SchemaURI: p.SchemaURI(), Tools: p.ToolNames(), Topics: keywords(p),
		Content: string(p.Raw),
	}
	return c.Template()
}

// keywords are the package's keyword triggers, lower-cased, deduplicated.
func keywords(p *Package) []string {
	var out []string
	for _, t := range p.Metadata.Triggers {
		k := strings.ToLower(strings.TrimSpace(t.Value))
		if t.Type == TriggerKeyword && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// FromEvent reads a package from a kind-30199 event: it checks the event's
// id and signature, its tags against each other and the content
// (events.ValidateCapability), parses the content with opts, checks that
// the tags describe the package, and that the file carries
// metadata.signature, that it verifies and is the event author's (Nuwa
// NIP-7: an unsigned package is rejected; ErrUnsigned).
func FromEvent(evt *nostr.Event, opts Options) (*Package, error) {
	if err := events.ValidateCapability(evt); err != nil {
		return nil, err
	}
	if ok, _ := evt.CheckSignature(); !ok || evt.GetID() != evt.ID {
		return nil, fmt.Errorf("%w: event %s: bad id or signature", ErrBadSignature, evt.ID)
	}
	p, err := Parse([]byte(evt.Content), opts)
	if err != nil {
		return nil, err
	}
	if err := matchTags(evt, p); err != nil {
		return nil, err
	}
	return p, checkFileAuthor(evt, p)
}

// matchTags checks that the tags describe p.
func matchTags(evt *nostr.Event, p *Package) error {
	c, _ := events.ParseCapability(evt)
	switch {
	case c.Name != p.Name() || c.Version != p.Version():
		return fmt.Errorf("%w: d %q but metadata.id %q", ErrEventMismatch, c.D(), p.URI())
	case c.SchemaURI != p.SchemaURI():
		return fmt.Errorf("%w: schema tag %q but the schema's $id is %q", ErrEventMismatch, c.SchemaURI, p.SchemaURI())
	case !sameSet(c.Tools, p.ToolNames()):
		return fmt.Errorf("%w: tool tags %v but the package declares %v", ErrEventMismatch, c.Tools, p.ToolNames())
	}
	return nil
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// checkFileAuthor: the file must be signed, verify, and be signed by the
// event's author.
func checkFileAuthor(evt *nostr.Event, p *Package) error {
	if p.Metadata.Signature == nil {
		return fmt.Errorf("%w: a published package must carry metadata.signature by the event's author (sign it with `agentnode cap sign`)", ErrUnsigned)
	}
	pk, err := Verify(p.Raw)
	if err != nil {
		return err
	}
	if pk != evt.PubKey {
		return fmt.Errorf("%w: the file is signed by %s, the event by %s", ErrEventMismatch, pk, evt.PubKey)
	}
	return nil
}
