package main

import (
	"context"
	"log/slog"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/lookup"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/relay"
)

// openLookup prepares on-demand lookups (agentd/lookup): when owner
// verification (GET /api/verify, /api/owners/…/agents, the state
// replicators' directory) lacks an agent's profile, an owner's claims or a
// relay list, the node asks its --peer relays and the author's NIP-65
// write relays, within the lookup budgets, and stores what it finds. The
// same lookups find a definition `agent install` names that is not local
// (findDefinition), a capability package by its naddr (the registry reads
// through verifyReader) and the root lesson of a stored comment (the
// follower, run by runLookup).
func (c *ServeCommand) openLookup(_ context.Context, logger *slog.Logger) error {
	var self []string
	if c.ln != nil {
		self = append(self, "ws://"+c.ln.Addr().String())
	}
	c.lookup = lookup.New(lookup.Config{
		Local:  c.relay,
		Peers:  func() []string { return c.Config.Peers },
		Self:   self,
		Logger: logger.With("component", "lookup"),
	})
	c.relay.SetVerifier(c.lookup.Querier())
	c.follower = c.lookup.Follower()
	c.onClose(unhooked(c.relay.OnStored(c.follower.Notify)))
	return nil
}

// runLookup follows stored comments' roots until ctx ends.
func (c *ServeCommand) runLookup(ctx context.Context) error {
	if c.follower == nil {
		<-ctx.Done()
		return nil
	}
	return c.follower.Run(ctx)
}

// findDefinition is the daemon's FindDefinition: ref looked up on the
// peers, the author's NIP-65 write relays and the relays its nevent or
// naddr names; what is found is stored in the relay.
func (c *ServeCommand) findDefinition(ctx context.Context, ref agentd.DefinitionRef) error {
	if c.lookup == nil {
		return lookup.ErrNotFound
	}
	p := lookup.Pointer{ID: ref.ID, Kind: events.KindDefinition, Author: ref.Author, Relays: ref.Relays}
	_, err := c.lookup.Resolve(ctx, p)
	return err
}

// verifyReader is what owner verification reads: the relay, looking up
// what it lacks once openLookup has run.
func (c *ServeCommand) verifyReader() relay.Querier {
	if c.lookup == nil {
		return c.relay
	}
	return c.lookup.Querier()
}
