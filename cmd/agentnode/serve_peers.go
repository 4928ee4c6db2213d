package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/peers"
	"github.com/agentnode/agentnode/internal/redact"
)

// openPeers prepares the peer syncer for --peer relays (nil when none):
// it pulls what the node's agents need (Daemon.Interests) into the local
// relay and pushes the agents' own events (Daemon.Outbox) to each peer;
// followAgents tells it when the interests change.
func (c *ServeCommand) openPeers(_ context.Context, logger *slog.Logger) error {
	if len(c.Config.Peers) == 0 {
		return nil
	}
	for _, p := range c.Config.Peers {
		if !strings.HasPrefix(p, "ws://") && !strings.HasPrefix(p, "wss://") {
			return usagef("serve: --peer %q: want a ws:// or wss:// relay URL", redact.URL(p))
		}
	}
	marks, err := peers.OpenFileWatermarks(c.Config.DataDir)
	if err != nil {
		return fmt.Errorf("serve: peers: %w", err)
	}
	c.peers = peers.New(peers.Config{
		Peers:      c.Config.Peers,
		Local:      c.relay,
		Interests:  func() []nostr.Filter { return c.daemon.Interests() }, // called from Run, after Open
		Outbox:     func() []nostr.Filter { return c.daemon.Outbox() },
		Watermarks: marks,
		Logger:     logger,
	})
	c.onClose(unhooked(c.relay.OnStored(c.peers.Notify)))
	return nil
}

// runPeers runs the syncer until ctx ends (without --peer: nothing).
func (c *ServeCommand) runPeers(ctx context.Context) error {
	if c.peers == nil {
		<-ctx.Done()
		return nil
	}
	return c.peers.Run(ctx)
}
