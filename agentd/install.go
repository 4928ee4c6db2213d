package agentd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/events"
)

// InstallRequest asks for an agent instantiated from a definition.
type InstallRequest struct {
	// Definition: nevent, note, 64-hex id, kind-4199 naddr, or npub:slug
	// (hex:slug) for the latest version; it must be on the local relay.
	Definition string `json:"definition"`
	// Owner: npub, nprofile or hex. Named in the agent's kind 0; the owner
	// confirms with their own kind 14199 (`agentnode claim add`).
	Owner string `json:"owner"`
	// Name defaults to the definition's title.
	Name string `json:"name,omitempty"`
	// AutoUpgrade opts the agent into automatic upgrades.
	AutoUpgrade bool `json:"auto_upgrade,omitempty"`
}

// Installed is the outcome of Install.
type Installed struct {
	Agent   Agent        `json:"agent"`
	Npub    string       `json:"npub"`
	Created bool         `json:"created"`           // false: the same install existed
	Profile *nostr.Event `json:"profile,omitempty"` // the kind 0 published (when created)
	// ClaimCommand is what the owner runs to confirm the agent (the node
	// never holds an owner's key): "agentnode claim add <agent npub>".
	ClaimCommand string `json:"claim_command"`
}

// Install instantiates an agent: a new keypair in the keystore, a registry
// entry and the agent's kind 0 (["bot"], ["e", <definition>], ["p",
// <owner>], {"name": ...}) signed by the agent and published to the store.
// It is idempotent by (definition id, owner, name): the same request again
// returns the existing agent (Created false). Several agents may run one
// definition under different names or owners.
func (d *Daemon) Install(ctx context.Context, req InstallRequest) (Installed, error) {
	ref, owner, err := parseInstall(req)
	if err != nil {
		return Installed{}, err
	}
	def, err := d.resolveDefinition(ctx, ref)
	if errors.Is(err, ErrDefinitionNotFound) && d.cfg.FindDefinition != nil && d.cfg.FindDefinition(ctx, ref) == nil {
		def, err = d.resolveDefinition(ctx, ref) // found elsewhere and stored: read it as if it had been here
	}
	if err != nil {
		return Installed{}, err
	}
	name := cmp.Or(strings.TrimSpace(req.Name), def.Title)
	files, err := d.stageFiles(ctx, def) // fetched and verified before anything exists (deffiles.go)
	if err != nil {
		return Installed{}, err
	}
	if err := d.begin(); err != nil {
		files.discard()
		return Installed{}, err
	}
	defer d.mu.Unlock()
	if a, ok := d.reg.find(def.ID, owner, name); ok {
		files.discard()
		return installed(a, false, nil), nil
	}
	a, profile, err := d.create(ctx, def, owner, name, req.AutoUpgrade)
	if errors.Is(err, errInstalledElsewhere) {
		files.discard()
		d.live.set(a)
		d.changed()
		return installed(a, false, nil), nil
	}
	if err != nil {
		files.discard()
		return Installed{}, err
	}
	if err := d.adopt(a.PubKey, files); err != nil {
		files.discard()
		return Installed{}, errors.Join(err, d.undoCreate(ctx, a))
	}
	d.live.set(a)
	if a.AutoUpgrade {
		d.live.queueUpgrade(a.PubKey)
	}
	d.changed()
	d.place(ctx, a.PubKey, true)
	d.ensureCore(ctx, a)
	d.log.Info("agent installed", "agent", a.PubKey, "name", a.Name, "definition", a.DefinitionID, "owner", a.Owner)
	return installed(a, true, profile), nil
}

// parseInstall checks the request's references.
func parseInstall(req InstallRequest) (DefinitionRef, string, error) {
	ref, err := ParseDefinitionRef(req.Definition)
	if err != nil {
		return DefinitionRef{}, "", err
	}
	if strings.TrimSpace(req.Owner) == "" {
		return DefinitionRef{}, "", fmt.Errorf("%w: owner is required (npub or hex)", ErrBadRequest)
	}
	owner, err := events.ParsePubKey(req.Owner)
	if err != nil {
		return DefinitionRef{}, "", fmt.Errorf("%w: owner: %v", ErrBadRequest, err)
	}
	return ref, owner, nil
}

// create makes the key, publishes the profile and saves the registry,
// deleting the key again if either fails. The caller holds d.mu.
func (d *Daemon) create(ctx context.Context, def *events.Definition, owner, name string, auto bool) (Agent, *nostr.Event, error) {
	pk, err := d.keys.Create(ctx)
	if err != nil {
		return Agent{}, nil, err
	}
	a := Agent{PubKey: pk, Name: name, Owner: owner, DefinitionID: def.ID, DefinitionKey: def.Key(),
		InstalledFrom: def.ID, Nudges: []string{}, InstalledAt: now(), AutoUpgrade: auto}
	if ir, ok := d.reg.records.(InstallRecords); ok {
		return d.createShared(ctx, ir, a, def)
	}
	profile, err := d.publishProfile(ctx, a, def)
	if err == nil {
		err = d.reg.put(ctx, a)
	}
	if err != nil {
		return Agent{}, nil, errors.Join(err, d.keys.Delete(context.WithoutCancel(ctx), pk))
	}
	return a, profile, nil
}

// errInstalledElsewhere: createShared found the install already recorded
// (another instance made it); the agent returned is that one.
var errInstalledElsewhere = errors.New("agentd: installed elsewhere")

// createShared is create on records that decide install idempotency
// (InstallRecords, shared by instances): the record is claimed first, so
// that of two instances installing the same agent at once one creates it
// and the other gets that agent (errInstalledElsewhere) and drops its key;
// the profile is published after the claim, and a failure undoes the
// record and the key. The caller holds d.mu.
func (d *Daemon) createShared(ctx context.Context, ir InstallRecords, a Agent, def *events.Definition) (Agent, *nostr.Event, error) {
	rctx, cancel := context.WithTimeout(ctx, recordsTimeout)
	got, created, err := ir.Install(rctx, a)
	cancel()
	if err != nil {
		return Agent{}, nil, errors.Join(fmt.Errorf("agentd: write record: %w", err), d.keys.Delete(context.WithoutCancel(ctx), a.PubKey))
	}
	if !created {
		if err := d.keys.Delete(ctx, a.PubKey); err != nil {
			d.log.Warn("unused agent key not deleted", "agent", a.PubKey, "err", err)
		}
		d.reg.remember(got)
		return got, nil, errInstalledElsewhere
	}
	profile, err := d.publishProfile(ctx, a, def)
	if err != nil {
		// undone even if ctx ended (the profile's publication may have failed for that)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordsTimeout)
		defer cancel()
		return Agent{}, nil, errors.Join(err, ir.Remove(rctx, a.PubKey), d.keys.Delete(rctx, a.PubKey))
	}
	d.reg.remember(a)
	return a, profile, nil
}

// publishProfile signs and publishes a's kind 0 (running def), stamped
// after any profile the store already holds for it.
func (d *Daemon) publishProfile(ctx context.Context, a Agent, def *events.Definition) (*nostr.Event, error) {
	p := events.Profile{Bot: true, DefinitionID: a.DefinitionID, Owner: a.Owner, Name: a.Name, Metadata: profileMetadata(def)}
	tmpl := p.Template()
	at, err := d.nextProfileTime(ctx, a.PubKey)
	if err != nil {
		return nil, err
	}
	tmpl.CreatedAt = at
	return d.signAndPublish(ctx, a.PubKey, tmpl)
}

// maxAbout bounds the profile's about, in runes.
const maxAbout = 280

// profileMetadata is what clients show of an agent besides its name
// (NIP-01 / NIP-24 kind 0 fields): about (the definition's description,
// else its role), picture (its image) and bot: true.
func profileMetadata(def *events.Definition) map[string]any {
	meta := map[string]any{"bot": true}
	about := def.Description
	if about == "" {
		about = def.Role
	}
	if r := []rune(strings.TrimSpace(about)); len(r) > maxAbout {
		about = string(r[:maxAbout-1]) + "…"
	}
	if about != "" {
		meta["about"] = strings.TrimSpace(about)
	}
	if def.Image != "" {
		meta["picture"] = def.Image
	}
	return meta
}

// nextProfileTime is now, or one second past the stored profile: of two
// versions of a replaceable event with the same created_at, the lower id
// wins, not the newer one.
func (d *Daemon) nextProfileTime(ctx context.Context, pubkey string) (nostr.Timestamp, error) {
	evts, err := d.store.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindProfile}, Authors: []string{pubkey}, Limit: 1})
	if err != nil {
		return 0, fmt.Errorf("agentd: query profile: %w", err)
	}
	ts := nostr.Now()
	if len(evts) > 0 && evts[0].CreatedAt >= ts {
		ts = evts[0].CreatedAt + 1
	}
	return ts, nil
}

// signAndPublish signs tmpl with the agent's key, validates and publishes it.
func (d *Daemon) signAndPublish(ctx context.Context, agent string, tmpl nostr.Event) (*nostr.Event, error) {
	evt := tmpl
	if evt.CreatedAt == 0 {
		evt.CreatedAt = nostr.Now()
	}
	if err := d.keys.Sign(ctx, agent, &evt); err != nil {
		return nil, fmt.Errorf("agentd: %w", err)
	}
	if err := events.Validate(&evt); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if err := d.store.Publish(ctx, &evt); err != nil {
		return nil, fmt.Errorf("%w: kind %d: %v", ErrRefused, evt.Kind, err)
	}
	return &evt, nil
}

func installed(a Agent, created bool, profile *nostr.Event) Installed {
	n := npubOf(a.PubKey)
	return Installed{Agent: a, Npub: n, Created: created, Profile: profile, ClaimCommand: "agentnode claim add " + n}
}

// npubOf encodes a hex pubkey as an npub.
func npubOf(pk string) string {
	s, err := nip19.EncodePublicKey(pk)
	if err != nil {
		return pk
	}
	return s
}

// ensureCore creates the new agent's core models (NIP-8: "exactly one
// instance of each core model for every user on first run"), as the agent
// acting for its owner, the caller its chat turns use. A failure is logged,
// not returned: the agent is installed, and every state call ensures them
// again.
func (d *Daemon) ensureCore(ctx context.Context, a Agent) {
	if d.cfg.State == nil {
		return
	}
	if err := d.cfg.State.EnsureCore(ctx, state.Caller{Agent: a.PubKey, Owner: a.Owner}); err != nil {
		d.log.Warn("core state models not created", "agent", a.PubKey, "err", err)
	}
}
