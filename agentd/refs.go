package agentd

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// DefinitionRef names a definition (events.DefinitionRef).
type DefinitionRef = events.DefinitionRef

// ParseDefinitionRef is events.ParseDefinitionRef with its error an
// ErrBadRequest too.
func ParseDefinitionRef(s string) (DefinitionRef, error) {
	ref, err := events.ParseDefinitionRef(s)
	if err != nil {
		return DefinitionRef{}, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return ref, nil
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
