package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/contextvm"
	"github.com/agentnode/agentnode/agentd/strangers"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/capabilities/mcpserver"
)

// serveContextVM is the --config "contextvm" section (docs/CONTEXTVM.md):
// every local agent is a ContextVM server (MCP over Nostr) on the node's
// relay. Every key is optional; absent or zero keeps the default.
type serveContextVM struct {
	// Encryption: "optional" (default: answer as asked), "required"
	// (refuse plaintext requests) or "disabled" (ignore gift wraps).
	Encryption string `json:"encryption"`
	// MaxSessions caps the live (agent, client) sessions (default 1000;
	// one more evicts the least recently used).
	MaxSessions int `json:"max_sessions"`
	// SessionIdleSeconds closes a session with no message for this long
	// (default 1800).
	SessionIdleSeconds int `json:"session_idle_seconds"`
}

// parseContextVMSection decodes the "contextvm" section, refusing unknown
// keys, an unknown encryption and negative numbers.
func parseContextVMSection(top map[string]json.RawMessage, f *serveFile) error {
	raw, ok := top["contextvm"]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f.ContextVM); err != nil {
		return fmt.Errorf(`"contextvm": %v`, err)
	}
	if _, err := contextvm.ParseEncryption(f.ContextVM.Encryption); err != nil {
		return fmt.Errorf(`"contextvm": %v`, err)
	}
	if f.ContextVM.MaxSessions < 0 || f.ContextVM.SessionIdleSeconds < 0 {
		return errors.New(`"contextvm": max_sessions and session_idle_seconds must not be negative`)
	}
	return nil
}

// errNotAllowed is the ContextVM server's Authorize refusal.
var errNotAllowed = errors.New("serve: the agent's a2a policy refuses this caller")

// openContextVM builds the ContextVM server of the local agents: the
// sessions' MCP servers are mcpserver.AgentServer's (the surface of
// /mcp/agents/{agent}), callers are admitted by the "a2a" policy and the
// strangers' budget as kind-25910 calls are, and requests arrive through
// the relay's hooks (25910 and 21059 are ephemeral, 1059 is stored).
func (c *ServeCommand) openContextVM(_ context.Context, logger *slog.Logger) error {
	var sec serveContextVM
	if c.file != nil {
		sec = c.file.ContextVM
	}
	enc := c.cvmEncryption()
	log := logger.With("component", "contextvm")
	c.rt.cvmAnn = c.newAnnouncer(log)
	opts := mcpserver.Options{Name: "agentnode", Version: Version, Logger: log}
	c.rt.cvm = contextvm.NewServer(contextvm.ServerConfig{
		Keys: c.localKey,
		Build: func(ctx context.Context, agent, _ string) (*mcp.Server, error) {
			return mcpserver.AgentServer(ctx, c.agentHost(), agent, opts)
		},
		Authorize:   c.cvmAuthorize,
		Gate:        strangers.Gate{Budget: c.rt.strangers, Known: c.a2aKnown},
		Publish:     c.relay.Publish,
		Encryption:  enc,
		MaxSessions: sec.MaxSessions,
		SessionIdle: time.Duration(sec.SessionIdleSeconds) * time.Second,
		Logger:      log,
	})
	c.onClose(unhooked(c.relay.OnEphemeral(c.rt.cvm.Offer)))
	c.onClose(unhooked(c.relay.OnStored(c.rt.cvm.Offer)))
	return nil
}

// cvmAuthorize admits the callers the "a2a" policy admits.
func (c *ServeCommand) cvmAuthorize(ctx context.Context, agent, client string) error {
	if !c.a2aAllowed(ctx, agent, client) {
		return errNotAllowed
	}
	return nil
}

// contextVMTransport reaches the ContextVM servers that mcp_service
// bindings name by "nostr:<npub|nprofile>": over the nprofile's relay
// hints, else the node's own relay and its --peer relays. The node calls
// them under a key of its own, made for the process (callers see one
// anonymous client per node run, not the calling agent).
func (c *ServeCommand) contextVMTransport(logger *slog.Logger) func(string) (mcp.Transport, error) {
	sk := nostr.GeneratePrivateKey()
	log := logger.With("component", "contextvm-client")
	return func(uri string) (mcp.Transport, error) {
		server, relays, err := contextvm.ParseServerURI(uri)
		if err != nil {
			return nil, err
		}
		if len(relays) == 0 {
			relays = append([]string{"ws://" + c.Addr()}, c.Config.Peers...)
		}
		return &contextvm.ClientTransport{Relays: relays, SecretKey: sk, Server: server, Logger: log}, nil
	}
}

// agentHost is the CAP host of the local agents, shared by the CAP, MCP
// and ContextVM endpoints.
func (c *ServeCommand) agentHost() *cap.Host {
	c.rt.hostOnce.Do(func() { c.rt.host = cap.NewHost(c.daemon.CapSource(), cap.Options{}) })
	return c.rt.host
}

// newAnnouncer builds the announcer of the local agents' ContextVM
// servers (agentd/contextvm): those running here, announced on the
// node's relay with its DM relays as their relay list.
func (c *ServeCommand) newAnnouncer(log *slog.Logger) *contextvm.Announcer {
	return contextvm.NewAnnouncer(contextvm.AnnouncerConfig{Agents: c.agentKeys, Keys: c.localKey,
		Server: func(ctx context.Context, agent string) (*mcp.Server, error) {
			return mcpserver.AgentServer(ctx, c.agentHost(), agent, mcpserver.Options{Name: "agentnode", Version: Version})
		},
		Info: func(agent string) contextvm.ServerInfo {
			info := contextvm.ServerInfo{Encryption: c.cvmEncryption()}
			if a, err := c.daemon.Lookup(agent); err == nil {
				info.Name = a.Name
			}
			return info
		},
		Relays:  func() []string { return c.dmRelayURLs("ws://" + c.Addr()) },
		Publish: c.relay.Publish, Query: c.relay.QuerySync, Logger: log})
}

// cvmEncryption is the "contextvm" section's encryption.
func (c *ServeCommand) cvmEncryption() contextvm.Encryption {
	if c.file == nil {
		return contextvm.EncryptionOptional
	}
	enc, _ := contextvm.ParseEncryption(c.file.ContextVM.Encryption) // checked when parsed
	return enc
}
