package main

import (
	"fmt"
	"log/slog"
	"net/url"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/relay"
)

// serveNode is the --config "node" section: who runs the node and where
// the world reaches it (docs/SERVE.md).
//
//	"node": {"name": "agents.example", "description": "…", "pubkey": "npub1…",
//	         "contact": "mailto:ops@example.org", "public_url": "wss://agents.example"}
//
// name, description, pubkey (the operator's, npub or hex) and contact go
// into the NIP-11 document; public_url is the relay address the agents
// advertise in their DM relay lists (kind 10050) instead of the listen
// address, which behind a proxy or in a container is not reachable.
type serveNode struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	PubKey      string `json:"pubkey"`
	Contact     string `json:"contact"`
	PublicURL   string `json:"public_url"`
	// LogLevel (debug, info, warn, error), when set, overrides
	// --log-level and AGENTNODE_LOG_LEVEL; a SIGHUP rereads it
	// (serve_reload.go).
	LogLevel string `json:"log_level"`
}

// check normalises the pubkey and checks the public URL.
func (n *serveNode) check() error {
	if n.PubKey != "" {
		pk, err := events.ParsePubKey(n.PubKey)
		if err != nil {
			return fmt.Errorf(`"node.pubkey": %v (want the operator's npub or 64-hex public key)`, err)
		}
		n.PubKey = pk
	}
	if n.LogLevel != "" {
		var l slog.Level
		if err := l.UnmarshalText([]byte(n.LogLevel)); err != nil {
			return fmt.Errorf(`"node.log_level" %q: want debug, info, warn or error`, n.LogLevel)
		}
	}
	if n.PublicURL == "" {
		return nil
	}
	u, err := url.Parse(n.PublicURL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return fmt.Errorf(`"node.public_url" %q: want a ws:// or wss:// URL such as "wss://relay.example.org"`, n.PublicURL)
	}
	return nil
}

// nodeConfig is the "node" section in force (zero without --config).
func (c *ServeCommand) nodeConfig() serveNode {
	return c.conf().Node
}

// operator is the NIP-11 operator information of the "node" section.
func (n serveNode) operator() relay.Operator {
	return relay.Operator{Name: n.Name, Description: n.Description, PubKey: n.PubKey, Contact: n.Contact}
}

// dmRelayURLs are the relays the agents' DM relay lists name: the public
// URL when set, else the listen address (local).
func (c *ServeCommand) dmRelayURLs(local string) []string {
	if u := c.nodeConfig().PublicURL; u != "" {
		return []string{u}
	}
	return []string{local}
}
