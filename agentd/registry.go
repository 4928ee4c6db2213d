package agentd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentnode/agentnode/agentd/internal/atomicfile"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/events"
)

// Agent is one installed agent as the registry (<data>/agents/agents.json)
// records it.
type Agent struct {
	PubKey string `json:"pubkey"` // the agent's own key (64-hex); its secret is in the keystore
	Name   string `json:"name"`   // --name, else the definition's title
	Owner  string `json:"owner"`  // the owner named in its kind 0 (64-hex)
	// DefinitionID is the kind-4199 version it runs now.
	DefinitionID string `json:"definition_id"`
	// DefinitionKey names every version of that definition: author:slug, or
	// author:title for definitions without a slug (events.Definition.Key).
	DefinitionKey string `json:"definition_key"`
	// InstalledFrom is the definition version it was installed from.
	InstalledFrom string    `json:"installed_from"`
	Nudges        []string  `json:"nudges"` // kind-4201 ids attached to the agent, in order
	InstalledAt   time.Time `json:"installed_at"`
	UpgradedAt    time.Time `json:"upgraded_at,omitzero"`
	// AutoUpgrade: switch to a newer version of the definition as soon as
	// the local relay stores one (opt-in; upgrades are otherwise explicit).
	AutoUpgrade bool `json:"auto_upgrade"`
	// StateOpen is what the owner opened of the agent's state to
	// requesters (anyone asking the agent who is neither it nor its
	// owner), per schema; by default nothing: private state is the agent's
	// and its owner's only (docs/ASM.md §6).
	StateOpen []state.Grant `json:"state_open,omitempty"`
}

// clone returns a copy that shares no slice with a.
func (a Agent) clone() Agent {
	a.Nudges = slices.Clone(a.Nudges)
	a.StateOpen = slices.Clone(a.StateOpen)
	if a.Nudges == nil {
		a.Nudges = []string{}
	}
	return a
}

// registryFile is the on-disk shape of agents.json.
type registryFile struct {
	Version int     `json:"version"`
	Agents  []Agent `json:"agents"`
}

const registryVersion = 1

// registry is the set of installed agents, persisted atomically on every
// change. Its methods are not safe for concurrent use: the Daemon locks.
type registry struct {
	path    string
	records Records // when set, the backing instead of path (see loadRecords)
	agents  []Agent // in install order
}

// loadRegistry reads path; a missing file is an empty registry.
func loadRegistry(path string) (*registry, error) {
	r := &registry{path: path}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agentd: read registry: %w", err)
	}
	var f registryFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("agentd: registry %s: %w", path, err)
	}
	if f.Version != registryVersion {
		return nil, fmt.Errorf("agentd: registry %s: version %d, want %d", path, f.Version, registryVersion)
	}
	for _, a := range f.Agents {
		if err := a.check(); err != nil {
			return nil, fmt.Errorf("agentd: registry %s: %w", path, err)
		}
		r.agents = append(r.agents, a.clone())
	}
	return r, nil
}

// check refuses a registry entry that could not have been written by us.
func (a Agent) check() error {
	for _, pk := range []string{a.PubKey, a.Owner, a.DefinitionID} {
		if !events.IsHex64(pk) {
			return fmt.Errorf("agent %q: bad pubkey or id %q", a.Name, pk)
		}
	}
	return nil
}

// save writes the registry atomically (0600).
func (r *registry) save() error {
	b, err := json.MarshalIndent(registryFile{Version: registryVersion, Agents: r.agents}, "", "  ")
	if err != nil {
		return fmt.Errorf("agentd: encode registry: %w", err)
	}
	if err := atomicfile.Write(r.path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("agentd: write registry: %w", err)
	}
	return nil
}

// get returns the agent with pubkey.
func (r *registry) get(pubkey string) (Agent, bool) {
	i := r.index(pubkey)
	if i < 0 {
		return Agent{}, false
	}
	return r.agents[i].clone(), true
}

func (r *registry) index(pubkey string) int {
	return slices.IndexFunc(r.agents, func(a Agent) bool { return a.PubKey == pubkey })
}

// byName returns the agents whose name is name (case-insensitive).
func (r *registry) byName(name string) []Agent {
	var out []Agent
	for _, a := range r.agents {
		if strings.EqualFold(a.Name, name) {
			out = append(out, a.clone())
		}
	}
	return out
}

// find returns the agent installed from defID (or now running it) for
// owner under name: the install idempotency key.
func (r *registry) find(defID, owner, name string) (Agent, bool) {
	for _, a := range r.agents {
		if (a.InstalledFrom == defID || a.DefinitionID == defID) && a.Owner == owner && a.Name == name {
			return a.clone(), true
		}
	}
	return Agent{}, false
}

// put adds a or replaces the agent with a's pubkey, then saves. On a save
// failure the change is undone.
func (r *registry) put(ctx context.Context, a Agent) error {
	if r.records != nil {
		return r.putRecord(ctx, a)
	}
	old := slices.Clone(r.agents)
	if i := r.index(a.PubKey); i >= 0 {
		r.agents[i] = a.clone()
	} else {
		r.agents = append(r.agents, a.clone())
	}
	if err := r.save(); err != nil {
		r.agents = old
		return err
	}
	return nil
}

// remove drops the agent with pubkey, then saves.
func (r *registry) remove(ctx context.Context, pubkey string) error {
	if r.records != nil {
		return r.removeRecord(ctx, pubkey)
	}
	old := slices.Clone(r.agents)
	r.agents = slices.DeleteFunc(r.agents, func(a Agent) bool { return a.PubKey == pubkey })
	if err := r.save(); err != nil {
		r.agents = old
		return err
	}
	return nil
}

// list returns copies of every agent, in install order.
func (r *registry) list() []Agent {
	out := make([]Agent, len(r.agents))
	for i, a := range r.agents {
		out[i] = a.clone()
	}
	return out
}
