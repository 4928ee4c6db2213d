package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/tasks"
)

// serveACP is the Agent Context Protocol side of `agentnode serve`
// (docs/AGENT-CONTEXT-PROTOCOL.md): the JSON-RPC endpoint at /acp, the
// task queue (<data>/agents/tasks.db) and the owner's consent store
// (<data>/agents/consent.db, /api/consent).
type serveACP struct {
	svc     *agentrpc.Service
	tasks   *tasks.Store
	consent *consent.Consent
}

// openConsent opens the consent store; the daemon asks it whether an
// agent is revoked, so it opens first.
func (c *ServeCommand) openConsent(ctx context.Context, _ *slog.Logger) error {
	var policy consent.Policy
	if c.file != nil {
		policy = c.file.Consent
	}
	cfg := consent.Config{Path: filepath.Join(c.Config.DataDir, "agents", "consent.db"), Policy: policy}
	c.cluster.ConfigureConsent(&cfg) // --postgres: decided once for every instance
	own, err := consent.Open(ctx, cfg)
	if err != nil {
		return fmt.Errorf("serve: consent: %w", err)
	}
	c.onClose(closeErr(own.Close))
	c.acp = &serveACP{consent: own}
	return nil
}

// revoked reports whether the owner revoked agent (agentnode consent revoke).
func (c *ServeCommand) revoked(ctx context.Context, agent string) bool {
	return c.acp != nil && c.acp.consent != nil && c.acp.consent.Revoked(ctx, agent)
}

// openACP opens the task queue and the endpoint over the directory, the
// daemon's chat and the 25910 client, and mounts /api/consent.
func (c *ServeCommand) openACP(ctx context.Context, logger *slog.Logger) error {
	tcfg := tasks.Config{Path: filepath.Join(c.Config.DataDir, "agents", "tasks.db"),
		Logger: logger.With("component", "tasks")}
	c.cluster.ConfigureTasks(&tcfg) // --postgres: one task store for every instance
	ts, err := tasks.Open(ctx, tcfg)
	if err != nil {
		return fmt.Errorf("serve: tasks: %w", err)
	}
	c.onClose(closeErr(ts.Close)) // its deadline sweep is a part of Serve
	c.acp.tasks = ts
	token, err := agentd.ReadToken(c.Config.DataDir)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	cfg := agentrpc.Config{Directory: c.rt.dir, Tasks: ts, Consent: c.acp.consent,
		Messenger: agentrpc.MessengerFunc(c.chatAnswer), Caller: c.rt.rpc, Local: c.isLocal,
		Keys: c.daemon.SecretKey, Name: "agentnode", Version: Version, Token: token,
		Logger: logger.With("component", "acp"), Options: c.httpConfig().jsonrpcOptions(logger.With("component", "acp"))}
	c.cluster.ConfigureACP(&cfg) // --postgres: the instance running the agent executes its tasks; calls for others are forwarded
	if c.rt.model != nil {       // never a typed nil in the interface
		cfg.Model = c.rt.model
	}
	if c.file != nil {
		cfg.RemoteTimeout = time.Duration(c.file.Directory.RemoteTimeoutSeconds) * time.Second
	}
	c.acp.svc = agentrpc.New(cfg) // mounted at /acp by mountEndpoints
	h := consent.OwnerHandler(c.acp.consent, token, c.agentsOwnedBy, logger.With("component", "consent"))
	c.relay.Handle("/api/consent", h)
	c.relay.Handle("/api/consent/", h)
	return nil
}

// agentsOwnedBy are the hex keys of the agents installed here that owner
// owns (the consent API's NIP-98 owners).
func (c *ServeCommand) agentsOwnedBy(owner string) []string {
	if c.daemon == nil {
		return nil
	}
	var out []string
	for _, a := range c.daemon.List() {
		if a.Owner == owner {
			out = append(out, a.PubKey)
		}
	}
	return out
}

// isLocal reports whether pk is one of this node's agents.
func (c *ServeCommand) isLocal(pk string) bool {
	a, err := c.daemon.Lookup(pk)
	return err == nil && a.PubKey == pk
}

// agentLoad is how many tasks this node has assigned to the agent and not
// yet finished (its heartbeat's load).
func (c *ServeCommand) agentLoad(agent string) int {
	if c.acp == nil || c.acp.tasks == nil {
		return 0
	}
	active, err := c.acp.tasks.Active(context.Background())
	if err != nil {
		return 0
	}
	return active[agent]
}

// serveRPC answers a kind-25910 call to a local agent: agent/* methods go
// to the Agent Context Protocol endpoint, anything else to the agent's
// capability tools (agentRPC).
func (c *ServeCommand) serveRPC(ctx context.Context, agent, from, method string, params json.RawMessage) (any, error) {
	if strings.HasPrefix(method, "agent/") && c.acp != nil && c.acp.svc != nil {
		return c.acp.svc.ServeRPC(ctx, agent, from, method, params)
	}
	return agentRPC{c}.ServeRPC(ctx, agent, from, method, params)
}
