package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// defRef names a definition: by event id, or by author and slug (or
// title, for definitions of the original shape), meaning its latest version.
type defRef struct {
	id     string
	author string
	slug   string
}

func (r defRef) String() string {
	if r.id != "" {
		return "id " + r.id
	}
	return fmt.Sprintf("%q by %s", r.slug, npub(r.author))
}

// parseDefRef accepts an nevent, note or hex id; an naddr of kind 4199; or
// author:slug with the author as npub or hex. It does no I/O.
func parseDefRef(s string) (defRef, error) {
	if left, slug, ok := strings.Cut(strings.TrimSpace(s), ":"); ok && slug != "" {
		if author, err := events.ParsePubKey(left); err == nil {
			return defRef{author: author, slug: slug}, nil
		}
	}
	ref, err := events.ParseRef(s)
	if err != nil {
		return defRef{}, fmt.Errorf("%w (or npub:slug)", err)
	}
	if ref.ID == "" { // naddr
		if ref.Kind != events.KindDefinition || ref.Identifier == "" {
			return defRef{}, fmt.Errorf("naddr of kind %d: want a kind %d naddr with an identifier", ref.Kind, events.KindDefinition)
		}
		return defRef{author: ref.Author, slug: ref.Identifier}, nil
	}
	return defRef{id: ref.ID}, nil
}

// resolve fetches the definition r names.
func (r defRef) resolve(ctx context.Context, s *session) (*events.Definition, error) {
	if r.id != "" {
		return definitionByID(ctx, s, r.id)
	}
	versions, err := definitionVersions(ctx, s, r.author, r.slug)
	if err != nil {
		return nil, err
	}
	if len(versions) == 0 {
		return nil, fmt.Errorf("no definition %s on %s", r, strings.Join(s.urls, ", "))
	}
	return events.LatestDefinitions(versions)[0], nil
}

// definitionByID fetches and parses one kind-4199 event.
func definitionByID(ctx context.Context, s *session, id string) (*events.Definition, error) {
	evt, err := fetchKind(ctx, s, id, events.KindDefinition, "definition")
	if err != nil {
		return nil, err
	}
	return events.ParseDefinition(evt)
}

// definitionVersions returns every version of author's definition whose
// slug (else title) is key.
func definitionVersions(ctx context.Context, s *session, author, key string) ([]*events.Definition, error) {
	evts, err := s.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindDefinition}, Authors: []string{author}, Limit: fetchLimit})
	if err != nil {
		return nil, err
	}
	var out []*events.Definition
	for _, d := range parseDefinitions(evts) {
		if cmp.Or(d.Slug, d.Title) == key {
			out = append(out, d)
		}
	}
	return out, nil
}

// parseDefinitions parses the kind-4199 events, skipping malformed ones.
func parseDefinitions(evts []*nostr.Event) []*events.Definition {
	var out []*events.Definition
	for _, e := range evts {
		if d, err := events.ParseDefinition(e); err == nil {
			out = append(out, d)
		}
	}
	return out
}
