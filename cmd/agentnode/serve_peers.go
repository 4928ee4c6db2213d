package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/peers"
)

// openPeers prepares the peer syncer for --peer relays (nil when none):
// it pulls what the node's agents need (Daemon.Interests) into the local
// relay and pushes the agents' own events (Daemon.Outbox) to each peer. It
// must exist before the daemon opens, whose interest changes it follows.
func (c *ServeCommand) openPeers(logger *slog.Logger) error {
	if len(c.Config.Peers) == 0 {
		return nil
	}
	for _, p := range c.Config.Peers {
		if !strings.HasPrefix(p, "ws://") && !strings.HasPrefix(p, "wss://") {
			return usagef("serve: --peer %q: want a ws:// or wss:// relay URL", p)
		}
	}
	marks, err := peers.OpenFileWatermarks(c.Config.DataDir)
	if err != nil {
		return fmt.Errorf("serve: peers: %w", err)
	}
	c.peers = peers.New(peers.Config{
		Peers:      c.Config.Peers,
		Local:      c.relay,
		Interests:  func() []nostr.Filter { return c.daemon.Interests() },
		Outbox:     func() []nostr.Filter { return c.daemon.Outbox() },
		Watermarks: marks,
		Logger:     logger,
	})
	c.unhookPeers = c.relay.OnStored(c.peers.Notify)
	return nil
}

// refreshPeers tells the syncer that the agents' interests changed.
func (c *ServeCommand) refreshPeers() {
	c.refreshState() // and the state replicators: an agent installed or removed
	if c.peers != nil {
		c.peers.Refresh()
	}
}

// runPeers runs the syncer until ctx ends; the returned channel closes
// when it has stopped.
func (c *ServeCommand) runPeers(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if c.peers == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		if err := c.peers.Run(ctx); err != nil {
			slog.Error("peer sync stopped", "err", err)
		}
	}()
	return done
}
