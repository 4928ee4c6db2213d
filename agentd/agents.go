package agentd

import (
	"context"
	"fmt"
	"strconv"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// DefinitionSummary identifies one version of a definition.
type DefinitionSummary struct {
	ID        string `json:"id"`
	Author    string `json:"author"`
	Title     string `json:"title"`
	Slug      string `json:"slug,omitempty"`
	Version   string `json:"version"`
	CreatedAt int64  `json:"created_at"`
}

func summarize(def *events.Definition) DefinitionSummary {
	return DefinitionSummary{ID: def.ID, Author: def.PubKey, Title: def.Title, Slug: def.Slug,
		Version: def.Version, CreatedAt: int64(def.CreatedAt)}
}

// AgentView is an installed agent with what the node knows about it.
type AgentView struct {
	Agent
	Npub       string            `json:"npub"`
	Definition DefinitionSummary `json:"definition"`
	// Latest is the newest stored version of the definition, when it is
	// not the one the agent runs (see Upgrade).
	Latest *DefinitionSummary `json:"latest,omitempty"`
	// Ownership is the NIP-AE two-way check: the agent's kind 0 names the
	// owner, and the owner's kind 14199 lists the agent.
	Ownership     events.Ownership `json:"ownership"`
	KeyEncrypted  bool             `json:"key_encrypted"`
	MissingNudges []string         `json:"missing_nudges,omitempty"` // attached but not on the local relay
	// Files are the definition's files in the agent's home (deffiles.go).
	Files []InstalledFile `json:"files,omitempty"`
	// Skills are the NIP-AD skills installed on the agent (skills.go).
	Skills []InstalledSkill `json:"skills,omitempty"`
	// MCPServers are the NIP-AD kind-4200 servers recorded on the agent,
	// pending, approved or denied (mcpservers.go).
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
}

// List returns every installed agent, in install order.
func (d *Daemon) List() []Agent {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reg.list()
}

// Show returns one agent with its definition, newer version if any, owner
// verification and key status.
func (d *Daemon) Show(ctx context.Context, agent string) (AgentView, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return AgentView{}, err
	}
	v := AgentView{Agent: a, Npub: npubOf(a.PubKey)}
	def, err := d.definition(ctx, a.DefinitionID)
	if err != nil {
		return AgentView{}, err
	}
	v.Definition = summarize(def)
	if latest, err := d.latestVersion(ctx, a.DefinitionKey); err == nil && latest != nil && latest.ID != def.ID {
		s := summarize(latest)
		v.Latest = &s
	}
	if v.Ownership, err = d.ownership(ctx, a); err != nil {
		return AgentView{}, err
	}
	if v.KeyEncrypted, err = d.keys.Encrypted(ctx, a.PubKey); err != nil {
		return AgentView{}, fmt.Errorf("agentd: %w", err)
	}
	if c, err := d.compose(ctx, a.PubKey); err == nil {
		v.MissingNudges = c.missing
	}
	if v.Files, err = d.Files(a.PubKey); err != nil {
		return AgentView{}, err
	}
	if v.MCPServers, err = d.MCPServers(a.PubKey); err != nil {
		return AgentView{}, err
	}
	if v.Skills, err = d.Skills(a.PubKey); err != nil {
		return AgentView{}, err
	}
	return v, nil
}

// ownership runs events.CheckOwnership on the stored kind 0 and 14199.
func (d *Daemon) ownership(ctx context.Context, a Agent) (events.Ownership, error) {
	profEvt, err := d.newest(ctx, nostr.Filter{Kinds: []int{events.KindProfile}, Authors: []string{a.PubKey}})
	if err != nil {
		return events.Ownership{}, err
	}
	var prof *events.Profile
	if profEvt != nil {
		prof, _ = events.ParseProfile(profEvt)
	}
	owner := a.Owner
	if prof != nil && prof.Owner != "" {
		owner = prof.Owner
	}
	claimsEvt, err := d.newest(ctx, nostr.Filter{Kinds: []int{events.KindOwnerClaims}, Authors: []string{owner}})
	if err != nil {
		return events.Ownership{}, err
	}
	var claims *events.OwnerClaims
	if claimsEvt != nil {
		claims, _ = events.ParseOwnerClaims(claimsEvt)
	}
	return events.CheckOwnership(a.PubKey, prof, claims), nil
}

// newest returns the newest stored event matching f, or nil.
func (d *Daemon) newest(ctx context.Context, f nostr.Filter) (*nostr.Event, error) {
	f.Limit = 10
	evts, err := d.store.QuerySync(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("agentd: query kind %v: %w", f.Kinds, err)
	}
	var best *nostr.Event
	for _, e := range evts {
		if best == nil || events.Supersedes(e, best) {
			best = e
		}
	}
	return best, nil
}

// SetAutoUpgrade switches the agent's automatic-upgrade policy. Switching
// it on checks for a newer version at once.
func (d *Daemon) SetAutoUpgrade(ctx context.Context, agent string, on bool) (Agent, error) {
	if err := d.begin(); err != nil {
		return Agent{}, err
	}
	defer d.mu.Unlock()
	a, err := d.lookup(agent)
	if err != nil || a.AutoUpgrade == on {
		return a, err
	}
	a.AutoUpgrade = on
	if err := d.reg.put(ctx, a); err != nil {
		return Agent{}, err
	}
	d.live.set(a)
	if on {
		d.live.queueUpgrade(a.PubKey)
	}
	d.signal()
	return a, nil
}

// Removed is the outcome of Remove.
type Removed struct {
	Agent Agent  `json:"agent"`
	Npub  string `json:"npub"`
	// Retractions are the kind 5 events published with retract: they
	// delete the agent's profile, lessons and comments.
	Retractions []*nostr.Event `json:"retractions,omitempty"`
	// ClaimCommand is what the owner runs to stop claiming the agent.
	ClaimCommand string `json:"claim_command"`
}

// retractBatch is the number of events one kind 5 names.
const retractBatch = 100

// Remove uninstalls the agent: its registry entry and its key file go, so
// nothing can sign for it again. What it published stays on the relays
// (its lessons keep their value for siblings while the owner's claim
// stands), unless retract is set: then, before the key goes, the agent
// signs kind 5 deletions of its profile, lessons and comments.
func (d *Daemon) Remove(ctx context.Context, agent string, retract bool) (Removed, error) {
	if err := d.begin(); err != nil {
		return Removed{}, err
	}
	defer d.mu.Unlock()
	a, err := d.lookup(agent)
	if err != nil {
		return Removed{}, err
	}
	r := Removed{Agent: a, Npub: npubOf(a.PubKey), ClaimCommand: "agentnode claim remove " + npubOf(a.PubKey)}
	if retract {
		if r.Retractions, err = d.retractAll(ctx, a.PubKey); err != nil {
			return Removed{}, err
		}
	}
	if err := d.reg.remove(ctx, a.PubKey); err != nil {
		return Removed{}, err
	}
	// The record is gone: the rest of the removal runs even if ctx ends.
	ctx = context.WithoutCancel(ctx)
	d.live.drop(a.PubKey)
	d.changed()
	d.place(ctx, a.PubKey, false)
	if err := d.keys.Delete(ctx, a.PubKey); err != nil {
		d.log.Error("agent removed but its key file could not be deleted", "agent", a.PubKey, "err", err)
	}
	if err := d.forgetFiles(a.PubKey); err != nil {
		d.log.Error("agent removed but its files could not be deleted", "agent", a.PubKey, "err", err)
	}
	if err := d.caps.forget(ctx, a.PubKey); err != nil {
		d.log.Error("agent removed but its capabilities folder could not be deleted", "agent", a.PubKey, "err", err)
	}
	d.log.Info("agent removed", "agent", a.PubKey, "name", a.Name, "retracted", len(r.Retractions))
	return r, nil
}

// retractAll publishes kind 5 deletions of every profile, lesson and
// comment the agent signed that the store holds.
func (d *Daemon) retractAll(ctx context.Context, agent string) ([]*nostr.Event, error) {
	f := nostr.Filter{Kinds: []int{events.KindProfile, events.KindLesson, events.KindComment}, Authors: []string{agent}, Limit: definitionFetchLimit}
	evts, err := d.store.QuerySync(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("agentd: query agent events: %w", err)
	}
	var out []*nostr.Event
	for start := 0; start < len(evts); start += retractBatch {
		tmpl := nostr.Event{Kind: events.KindDeletion, Content: "agent removed"}
		kinds := map[int]bool{}
		for _, evt := range evts[start:min(start+retractBatch, len(evts))] {
			tmpl.Tags = append(tmpl.Tags, nostr.Tag{"e", evt.ID})
			kinds[evt.Kind] = true
		}
		for k := range kinds {
			tmpl.Tags = append(tmpl.Tags, nostr.Tag{"k", strconv.Itoa(k)})
		}
		del, err := d.signAndPublish(ctx, agent, tmpl)
		if err != nil {
			return out, err
		}
		out = append(out, del)
	}
	return out, nil
}
