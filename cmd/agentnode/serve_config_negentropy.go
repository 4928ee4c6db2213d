package main

import (
	"time"

	"github.com/agentnode/agentnode/relay"
)

// relayNegentropy are the NIP-77 bounds the relay runs with: the "relay"
// section's negentropy_* keys over relay.DefaultNegentropyLimits (zero
// fields are filled by the relay itself; docs/RELAY.md, "NIP-77").
func (c *ServeCommand) relayNegentropy() relay.NegentropyLimits {
	r := c.conf().Relay
	return relay.NegentropyLimits{
		MaxSessions: r.NegentropyMaxSessions, MaxItems: r.NegentropyMaxItems,
		MaxHeldItems: r.NegentropyMaxHeldItems, FrameSize: r.NegentropyFrameBytes,
		IdleTimeout: time.Duration(r.NegentropyIdleSeconds) * time.Second,
	}
}
