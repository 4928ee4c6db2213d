package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// defRef is a definition reference (events.DefinitionRef, parsed by
// events.ParseDefinitionRef) that the CLI resolves over its session.
type defRef struct{ events.DefinitionRef }

func (r defRef) String() string {
	if r.ID != "" {
		return "id " + r.ID
	}
	return fmt.Sprintf("%q by %s", r.Slug, npub(r.Author))
}

// parseDefRef is events.ParseDefinitionRef. It does no I/O.
func parseDefRef(s string) (defRef, error) {
	ref, err := events.ParseDefinitionRef(s)
	return defRef{ref}, err
}

// resolve fetches the definition r names.
func (r defRef) resolve(ctx context.Context, s *session) (*events.Definition, error) {
	if r.ID != "" {
		return definitionByID(ctx, s, r.ID)
	}
	versions, err := definitionVersions(ctx, s, r.Author, r.Slug)
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
