package main

import (
	"fmt"

	"github.com/agentnode/agentnode/events"
)

// operatorKeys parses the "relay" section's operators (npub, nprofile or
// hex) to hex.
func operatorKeys(keys []string) ([]string, error) {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		pk, err := events.ParsePubKey(k)
		if err != nil {
			return nil, fmt.Errorf(`"relay.operators": %q: %v`, k, err)
		}
		out = append(out, pk)
	}
	return out, nil
}

// relayOperators are the pubkeys that may manage the relay over NIP-86
// (checked by ParseFlags).
func (c *ServeCommand) relayOperators() []string {
	if c.file == nil {
		return nil
	}
	ops, _ := operatorKeys(c.file.Relay.Operators)
	return ops
}

// agentKindsOnly is the "relay" section's agent_kinds_only switch.
func (c *ServeCommand) agentKindsOnly() bool {
	return c.file != nil && c.file.Relay.AgentKindsOnly
}
