package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/replicate"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/relay"
)

// directoryTTL is how long an owner's verified agents are cached: the
// directory is consulted for every batch sent and event received.
const directoryTTL = time.Second

// serveState is the Agent State Model of `agentnode serve`: the runtime on
// <data>/state.db (the store `agentnode state` opens too; SQLite in WAL
// mode with a busy timeout and BEGIN IMMEDIATE, so both processes may
// write, and the replicators poll the op log for the CLI's commits) and a
// replicate.Supervisor running one replicator per installed agent, pushing
// and pulling op events on the local relay (in-process) and on every
// --peer relay (websocket, NIP-42 AUTH with the agent's key). docs/ASM.md §9.
type serveState struct {
	rt  *state.Runtime
	sup *replicate.Supervisor
	log *slog.Logger
}

// openState opens the state runtime in the data directory and builds the
// replicators' supervisor. Nothing runs until Serve.
func (c *ServeCommand) openState(ctx context.Context, logger *slog.Logger) error {
	rt, err := state.Open(ctx, state.Options{Dir: c.Config.DataDir, Logger: logger, Schemas: registrySchemas{c}})
	if err != nil {
		return fmt.Errorf("serve: open state in %s: %w", c.Config.DataDir, err)
	}
	c.onClose(rt.Close)
	log := logger.With("component", "state")
	if err := c.cluster.OpenState(ctx, rt, log); err != nil { // --postgres: a cache of the shared op log
		return fmt.Errorf("serve: %w", err)
	}
	dir := replicate.NewCachedDirectory(replicate.DirectoryFunc(c.verifiedAgents), directoryTTL, nil)
	c.onClose(unhooked(c.relay.OnStored(func(evt *nostr.Event) {
		if replicate.ChangesOwners(evt) {
			dir.Invalidate()
		}
	})))
	c.asm = &serveState{rt: rt, log: log, sup: replicate.NewSupervisor(replicate.SupervisorConfig{
		Agents: c.ownedAgents, SecretKey: c.secretKey, Local: c.relay, Peers: c.Config.Peers, Store: rt.Store(),
		Template: replicate.Config{Directory: dir, Schemas: rt.Schemas(), Logger: log,
			AntiEntropyInterval: c.antiEntropyInterval()},
		Logger: log})}
	return nil
}

// State is the Agent State Model runtime (after Open).
func (c *ServeCommand) State() *state.Runtime {
	if c.asm == nil {
		return nil
	}
	return c.asm.rt
}

// Replicators returns the running replicators by agent pubkey (tests,
// status).
func (c *ServeCommand) Replicators() map[string]*replicate.Replicator {
	if c.asm == nil {
		return map[string]*replicate.Replicator{}
	}
	return c.asm.sup.Replicators()
}

// ownedAgents are the installed agents that have an owner (agent ->
// owner): those whose state replicates.
func (c *ServeCommand) ownedAgents() map[string]string {
	want := map[string]string{}
	for _, a := range c.daemon.List() {
		if a.Owner != "" && c.runsHere(a.PubKey) {
			want[a.PubKey] = a.Owner
		}
	}
	return want
}

// verifiedAgents are owner's agents on the local relay: those its latest
// kind 14199 lists whose own latest kind 0 names the owner
// (relay.VerifyAgent: the two-way NIP-AE link). They read the owner's
// shared state and may write it.
func (c *ServeCommand) verifiedAgents(ctx context.Context, owner string) ([]string, error) {
	linked, err := relay.OwnerAgents(ctx, c.verifyReader(), owner) // one claims read, one profile query; what the relay lacks is looked up
	if err != nil {
		return nil, err
	}
	var agents []string
	for _, v := range linked {
		if v.Verified {
			agents = append(agents, v.Agent)
		}
	}
	return agents, nil
}

// registrySchemas is the state runtime's SchemaSource: the capability
// registry over the node's relay (NIP-8: "$id MUST resolve via local cache →
// Registry"). It resolves the capability the URI names — the latest
// version, by the registry's author rule (docs/REGISTRY.md), the caller's
// owner preferred — and answers
// its schema when the package declares exactly that $id. One lookup by
// name per unknown schema: nothing scans the store.
type registrySchemas struct {
	c *ServeCommand // its registry is built after the state runtime opens
}

var _ state.SchemaSource = registrySchemas{}

// FindSchema implements state.SchemaSource.
func (s registrySchemas) FindSchema(ctx context.Context, capName, uri string, trusted ...string) (string, []byte, bool, error) {
	reg := s.c.rt.reg
	if reg == nil {
		return "", nil, false, nil
	}
	e, err := reg.Resolve(ctx, capName, "", trusted...)
	if errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrAmbiguous) || errors.Is(err, registry.ErrBadRef) {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, err
	}
	if e.Package == nil || e.Package.SchemaURI() != uri {
		return "", nil, false, nil
	}
	return e.Package.Metadata.ID, e.Package.Schema, true, nil
}
