package main

import (
	"context"
	"log/slog"

	"github.com/agentnode/agentnode/agentd/lookup"
	"github.com/agentnode/agentnode/relay"
)

// openLookup prepares on-demand lookups (agentd/lookup): when owner
// verification (GET /api/verify, /api/owners/…/agents, the state
// replicators' directory) lacks an agent's profile, an owner's claims or a
// relay list, the node asks its --peer relays and the author's NIP-65
// write relays, within the lookup budgets, and stores what it finds.
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
	return nil
}

// verifyReader is what owner verification reads: the relay, looking up
// what it lacks once openLookup has run.
func (c *ServeCommand) verifyReader() relay.Querier {
	if c.lookup == nil {
		return c.relay
	}
	return c.lookup.Querier()
}
