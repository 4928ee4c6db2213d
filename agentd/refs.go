package agentd

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// DefinitionRef names a definition: one version by event id, or the latest
// version of author's definition with slug (or title, for definitions of
// the original shape).
type DefinitionRef struct {
	ID     string
	Author string
	Slug   string
	Relays []string // where an nevent or naddr says it lives (lookups)
}

func (r DefinitionRef) String() string {
	if r.ID != "" {
		return r.ID
	}
	return r.Author + ":" + r.Slug
}

// ParseDefinitionRef accepts an nevent, note or 64-hex id; a kind-4199
// naddr; or author:slug with the author as npub or hex (the latest version).
func ParseDefinitionRef(s string) (DefinitionRef, error) {
	if left, slug, ok := strings.Cut(strings.TrimSpace(s), ":"); ok && slug != "" {
		if author, err := events.ParsePubKey(left); err == nil {
			return DefinitionRef{Author: author, Slug: slug}, nil
		}
	}
	ref, err := events.ParseRef(s)
	if err != nil {
		return DefinitionRef{}, fmt.Errorf("%w: definition: %v (or npub:slug)", ErrBadRequest, err)
	}
	if ref.ID != "" {
		return DefinitionRef{ID: ref.ID, Author: ref.Author, Relays: ref.Relays}, nil
	}
	if ref.Kind != events.KindDefinition || ref.Identifier == "" {
		return DefinitionRef{}, fmt.Errorf("%w: definition: naddr of kind %d: want kind %d with an identifier", ErrBadRequest, ref.Kind, events.KindDefinition)
	}
	return DefinitionRef{Author: ref.Author, Slug: ref.Identifier, Relays: ref.Relays}, nil
}

// definitionFetchLimit bounds the versions read for one author.
const definitionFetchLimit = 5000

// resolveDefinition reads the definition ref names from the store.
func (d *Daemon) resolveDefinition(ctx context.Context, ref DefinitionRef) (*events.Definition, error) {
	if ref.ID != "" {
		return d.definition(ctx, ref.ID)
	}
	versions, err := d.definitionVersions(ctx, ref.Author+":"+ref.Slug)
	if err != nil {
		return nil, err
	}
	if len(versions) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrDefinitionNotFound, ref)
	}
	return events.LatestDefinitions(versions)[0], nil
}

// definition reads one kind-4199 event by id.
func (d *Daemon) definition(ctx context.Context, id string) (*events.Definition, error) {
	evt, err := d.byID(ctx, id)
	if err != nil {
		return nil, err
	}
	if evt == nil || evt.Kind != events.KindDefinition {
		return nil, fmt.Errorf("%w: %s", ErrDefinitionNotFound, id)
	}
	return events.ParseDefinition(evt)
}

// definitionVersions reads every stored version with key author:slug-or-title.
func (d *Daemon) definitionVersions(ctx context.Context, key string) ([]*events.Definition, error) {
	author, _, _ := strings.Cut(key, ":")
	f := nostr.Filter{Kinds: []int{events.KindDefinition}, Authors: []string{author}, Limit: definitionFetchLimit}
	evts, err := d.store.QuerySync(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("agentd: query definitions: %w", err)
	}
	var out []*events.Definition
	for _, evt := range evts {
		if def, err := events.ParseDefinition(evt); err == nil && def.Key() == key {
			out = append(out, def)
		}
	}
	return out, nil
}

// nudge reads one kind-4201 event by reference (nevent, note or hex).
func (d *Daemon) nudge(ctx context.Context, ref string) (*events.Nudge, error) {
	id, err := nudgeID(ref)
	if err != nil {
		return nil, err
	}
	evt, err := d.byID(ctx, id)
	if err != nil {
		return nil, err
	}
	if evt == nil || evt.Kind != events.KindNudge {
		return nil, fmt.Errorf("%w: %s", ErrNudgeNotFound, id)
	}
	return events.ParseNudge(evt)
}

// byID reads one stored event, or nil.
func (d *Daemon) byID(ctx context.Context, id string) (*nostr.Event, error) {
	evts, err := d.store.QuerySync(ctx, nostr.Filter{IDs: []string{id}, Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("agentd: query %s: %w", id, err)
	}
	if len(evts) == 0 {
		return nil, nil
	}
	return evts[0], nil
}

// lookup finds an installed agent by npub, nprofile, hex pubkey or name.
// The caller holds d.mu.
func (d *Daemon) lookup(ref string) (Agent, error) {
	ref = strings.TrimSpace(ref)
	if pk, err := events.ParsePubKey(ref); err == nil {
		if a, ok := d.reg.get(pk); ok {
			return a, nil
		}
		return Agent{}, fmt.Errorf("%w: %s", ErrUnknownAgent, pk)
	}
	switch found := d.reg.byName(ref); len(found) {
	case 0:
		return Agent{}, fmt.Errorf("%w: %q", ErrUnknownAgent, cmp.Or(ref, "(empty)"))
	case 1:
		return found[0], nil
	default:
		return Agent{}, fmt.Errorf("%w: %d agents are named %q", ErrAmbiguousAgent, len(found), ref)
	}
}

// Lookup returns the installed agent named by ref: its npub, nprofile, hex
// pubkey, or its name when no other agent has it.
func (d *Daemon) Lookup(ref string) (Agent, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lookup(ref)
}

// nudgeID parses a nudge reference (nevent, note or hex) to its id.
func nudgeID(ref string) (string, error) {
	r, err := events.ParseRef(ref)
	if err != nil || r.ID == "" {
		return "", fmt.Errorf("%w: nudge: want nevent1, note1 or 64 hex characters", ErrBadRequest)
	}
	return r.ID, nil
}
