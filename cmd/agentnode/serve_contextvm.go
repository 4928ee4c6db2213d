package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
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
	c.rt.cvmChanged = make(chan struct{}, 1)
	log := logger.With("component", "contextvm")
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

// cvmAnnouncer keeps the local agents' ContextVM announcements (CEP-6
// kinds 11316-11320 and a NIP-65 relay list) current: each agent is
// announced at start and whenever the agents or their capabilities change;
// an agent removed since gets its announcements deleted (NIP-09), signed
// with the key remembered from when it was announced.
type cvmAnnouncer struct {
	mu        sync.Mutex
	announced map[string]string // agent pubkey -> its secret key
}

// runContextVM runs the ContextVM server and, beside it, the announcer,
// which announces at once and again after every agent change
// (contextVMChanged).
func (c *ServeCommand) runContextVM(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c.announceContextVM(ctx)
			select {
			case <-ctx.Done():
				return
			case <-c.rt.cvmChanged:
			}
		}
	})
	err := c.rt.cvm.Run(ctx)
	wg.Wait()
	return err
}

// contextVMChanged asks the announcer to announce again (never blocks).
func (c *ServeCommand) contextVMChanged() {
	select {
	case c.rt.cvmChanged <- struct{}{}:
	default:
	}
}

// announceContextVM publishes every local agent's announcements and
// deletes those of agents gone since the last call.
func (c *ServeCommand) announceContextVM(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	a := &c.rt.cvmAnn
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.announced == nil {
		a.announced = map[string]string{}
	}
	live := map[string]bool{}
	for _, pk := range c.agentKeys() {
		live[pk] = true
		if sk, ok := c.localKey(pk); ok {
			if err := c.announceAgent(ctx, pk, sk); err != nil {
				slog.Warn("contextvm: announcing the agent", "agent", pk, "err", err)
				continue
			}
			a.announced[pk] = sk
		}
	}
	for pk, sk := range a.announced {
		if !live[pk] {
			if err := c.retractAgent(ctx, pk, sk); err != nil {
				slog.Warn("contextvm: deleting a removed agent's announcements", "agent", pk, "err", err)
				continue
			}
			delete(a.announced, pk)
		}
	}
}

// announceAgent publishes one agent's announcements.
func (c *ServeCommand) announceAgent(ctx context.Context, pk, sk string) error {
	srv, err := mcpserver.AgentServer(ctx, c.agentHost(), pk, mcpserver.Options{Name: "agentnode", Version: Version})
	if err != nil {
		return err
	}
	info := contextvm.ServerInfo{Encryption: c.cvmEncryption()}
	if a, err := c.daemon.Lookup(pk); err == nil {
		info.Name = a.Name
	}
	evts, err := contextvm.Announcements(ctx, srv, sk, info, c.dmRelayURLs("ws://"+c.Addr()))
	if err != nil {
		return err
	}
	for _, evt := range evts {
		if err := c.relay.Publish(ctx, evt); err != nil {
			return fmt.Errorf("kind %d: %w", evt.Kind, err)
		}
	}
	return nil
}

// retractAgent deletes a removed agent's stored announcements.
func (c *ServeCommand) retractAgent(ctx context.Context, pk, sk string) error {
	stored, err := c.relay.QuerySync(ctx, nostr.Filter{Kinds: contextvm.AnnouncementKinds, Authors: []string{pk}})
	if err != nil {
		return err
	}
	del, err := contextvm.Retraction(stored, sk, "agent removed")
	if err != nil || del == nil {
		return err
	}
	return c.relay.Publish(ctx, del)
}

// cvmEncryption is the "contextvm" section's encryption.
func (c *ServeCommand) cvmEncryption() contextvm.Encryption {
	if c.file == nil {
		return contextvm.EncryptionOptional
	}
	enc, _ := contextvm.ParseEncryption(c.file.ContextVM.Encryption) // checked when parsed
	return enc
}
