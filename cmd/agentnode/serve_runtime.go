package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/contextvm"
	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/agentd/nostrrpc"
	"github.com/agentnode/agentnode/agentd/requester"
	"github.com/agentnode/agentnode/agentd/strangers"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/internal/metrics"
	"github.com/agentnode/agentnode/internal/redact"
)

// serveRuntime is the capability runtime of `agentnode serve`: the chat
// model, the tool bindings, JSON-RPC over kind 25910 between agents (a
// client for nuwa_a2a and remote calls, a server answering calls to the
// local agents) and the NIP-17 DM service.
type serveRuntime struct {
	model    *llm.Client // nil without a configured model
	bindings *bindings.Runner
	rpc      *nostrrpc.Client
	rpcSrv   *nostrrpc.Server
	rpcPeers *nostrrpc.PeerListener // rpcSrv's requests arriving on the --peer relays
	dm       *dm.Service
	cvm      *contextvm.Server    // the local agents as ContextVM servers (serve_contextvm.go)
	cvmAnn   *contextvm.Announcer // their CEP-6 announcements
	host     *cap.Host            // the agents' CAP host (agentHost)
	hostOnce sync.Once
	// strangers is the budget of strangers' DMs and 25910 calls (serve_strangers.go)
	strangers *strangers.Budget
	dir       *directory.Directory   // the agent directory (serve_directory.go)
	beat      *directory.Heartbeater // the local agents' 30333 heartbeats
	// quiet ends when silence is called: the heartbeats stop without an
	// offline beat, as when a node dies (heartbeat_e2e_test.go).
	quiet   context.Context
	silence context.CancelFunc

	reg     *registry.Registry // capability packages the relay holds (serve_endpoints.go)
	metrics *metrics.Metrics   // /metrics (serve_metrics.go)

	lastAgents string // agentsFingerprint at the last agent change (followAgents only)
}

// agentsFingerprint names the local agents and their installed capability
// versions, in a stable order.
func (c *ServeCommand) agentsFingerprint(ctx context.Context) string {
	var b strings.Builder
	keys := c.agentKeys()
	slices.Sort(keys)
	for _, pk := range keys {
		b.WriteString(pk)
		caps, _ := c.daemon.Caps(ctx, pk)
		for _, ic := range caps {
			b.WriteString(" " + ic.ID)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// openRuntime builds the metrics, the model client, the kind-25910 client
// (the local relay at the listen address and every --peer) and the
// bindings runner that calls through it; the daemon is opened with them.
func (c *ServeCommand) openRuntime(_ context.Context, logger *slog.Logger) error {
	c.rt = &serveRuntime{}
	cfg, err := c.modelConfig()
	switch {
	case errors.Is(err, llm.ErrNoModel):
		logger.Info("no chat model configured: agents answer chat and DMs with an apology (set AGENTNODE_LLM_MODEL and AGENTNODE_LLM_BASE_URL)")
	case err != nil:
		return usagef("serve: model: %v", err)
	default:
		if c.rt.model, err = llm.New(cfg); err != nil {
			return usagef("serve: model: %v", err)
		}
		logger.Info("chat model", "model", cfg.Model, "base_url", redact.URL(cfg.BaseURL))
	}
	c.openMetrics()
	c.rt.rpc = nostrrpc.NewClient(nostrrpc.ClientConfig{Relays: append([]string{"ws://" + c.Addr()}, c.Config.Peers...),
		Keys: c.secretKey, Logger: logger.With("component", "a2a")})
	c.onClose(closeErr(c.rt.rpc.Close))
	bcfg := c.bindingsConfig()
	bcfg.A2A = c.rt.rpc
	bcfg.Nostr = c.contextVMTransport(logger) // nostr: service_uris (serve_contextvm.go)
	bcfg.OnCall = append(bcfg.OnCall, c.countToolCall)
	c.rt.bindings = bindings.New(bcfg)
	c.onClose(closeErr(c.rt.bindings.Close)) // MCP sessions and processes
	return nil
}

// daemonRuntime sets the daemon's capability runtime fields.
func (c *ServeCommand) daemonRuntime(cfg *agentd.Config) {
	cfg.State = c.asm.rt
	cfg.Bindings = c.rt.bindings // decorated by its OnCall hooks, not wrapped
	cfg.Revoked = c.revoked
	cfg.Capabilities = agentd.RegistryResolver(c.rt.reg)
	if c.rt.model != nil {
		cfg.Model = c.rt.model
	}
	if c.file != nil { // "models" and "router" (serve_config_models.go)
		cfg.Models, cfg.RouterIdle = c.file.Routing.models(), c.file.Routing.idle()
		if m := c.file.Routing.Router.EmbeddingModel; m != "" && c.rt.model != nil {
			cfg.Embedder, cfg.EmbedThreshold = llmEmbedder{c.rt.model, m}, c.file.Routing.Router.EmbeddingThreshold
		}
	}
}

// llmEmbedder is the router's Embedder: model on the chat model's
// endpoint (/v1/embeddings).
type llmEmbedder struct {
	c     *llm.Client
	model string
}

func (e llmEmbedder) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	return e.c.Embed(ctx, e.model, texts)
}

// openDM builds the kind-25910 server answering calls to the local agents
// (on the node's relay, and on every --peer relay through rpcPeers) and
// the NIP-17 DM service; they run in Serve.
func (c *ServeCommand) openDM(ctx context.Context, logger *slog.Logger) error {
	c.rt.strangers = c.strangersBudget()
	c.rt.rpcSrv = nostrrpc.NewServer(nostrrpc.ServerConfig{Source: c.relay, Publish: c.relay.Publish,
		Keys: c.localKey, Handler: nostrrpc.HandlerFunc(c.timedRPC), Logger: logger.With("component", "a2a-server"),
		Gate: strangers.Gate{Budget: c.rt.strangers, Known: c.a2aKnown}})
	c.rt.rpcPeers = nostrrpc.NewPeerListener(nostrrpc.PeerListenerConfig{Relays: c.Config.Peers, Agents: c.agentKeys,
		Keys: c.localKey, Server: c.rt.rpcSrv, Logger: logger.With("component", "a2a-peers")})
	cfg := dm.Config{Source: c.relay, Publish: c.relay.Publish, Agents: c.agentKeys,
		Keys: c.daemon.SecretKey, Responder: dm.ResponderFunc(c.timedDM),
		StatePath: filepath.Join(c.Config.DataDir, "dm", "state.json"),
		RelayURLs: c.dmRelayURLs("ws://" + c.Addr()), Logger: logger.With("component", "dm"),
		Gate: strangers.Gate{Budget: c.rt.strangers, Known: c.dmKnown}}
	if err := c.cluster.ConfigureDM(ctx, &cfg); err != nil { // --postgres: answered once across instances
		return fmt.Errorf("serve: %w", err)
	}
	c.rt.dm = dm.New(cfg)
	return nil
}

// secretKey is a local agent's secret key. The 25910 client is built
// before the daemon that holds the keys (the daemon calls through it), and
// asks for a key only once Serve runs.
func (c *ServeCommand) secretKey(ctx context.Context, pubkey string) (string, error) {
	return c.daemon.SecretKey(ctx, pubkey)
}

// agentKeys are the local agents' pubkeys.
func (c *ServeCommand) agentKeys() []string {
	var pks []string
	for _, a := range c.daemon.List() {
		if c.cluster.Runs(a.PubKey) { // --postgres: those running here
			pks = append(pks, a.PubKey)
		}
	}
	return pks
}

// localKey is the secret key of an agent running here; ok is false for
// any other key (with --postgres another instance answers for it).
func (c *ServeCommand) localKey(ctx context.Context, pubkey string) (string, bool) {
	if !c.runsHere(pubkey) {
		return "", false
	}
	sk, err := c.daemon.SecretKey(ctx, pubkey)
	return sk, err == nil
}

// respondDM answers a NIP-17 DM through the agent's chat, the sender's
// pubkey being the conversation.
func (c *ServeCommand) respondDM(ctx context.Context, agent, from, text string) (string, error) {
	if !c.dmAllowed(ctx, agent, from) {
		return "", dm.ErrNoAnswer
	}
	// a correspondent who is not the owner reaches the agent's state as a stranger
	answer, err := c.chatAnswer(requester.With(ctx, from), agent, from, text)
	if errors.Is(err, agentd.ErrRevoked) { // a revoked agent answers nothing, not even an apology
		return "", dm.ErrNoAnswer
	}
	return answer, err
}

// chatAnswer runs one message through the agent's chat (router and model
// loop) and returns the answer; a revoked agent fails (agentd.ErrRevoked).
func (c *ServeCommand) chatAnswer(ctx context.Context, agent, conversation, text string) (string, error) {
	if c.isLocal(agent) && !c.cluster.Runs(agent) { // --postgres: another instance runs it
		return c.cluster.Chat(ctx, agent, conversation, text)
	}
	r, err := c.daemon.Chat(ctx, agent, conversation, text)
	return r.Answer, err
}

// agentRPC answers kind-25910 calls to a local agent: a method is the name
// of a tool of one of the agent's installed capabilities, run as that
// capability with the params as arguments (docs/BINDINGS.md), for the
// callers the "a2a" policy admits (docs/SERVE.md).
type agentRPC struct{ c *ServeCommand }

func (h agentRPC) ServeRPC(ctx context.Context, agent, from, method string, params json.RawMessage) (any, error) {
	if !h.c.a2aAllowed(ctx, agent, from) {
		return nil, capabilities.Errorf(capabilities.CodePermissionDenied, "this agent runs its tools only for callers its owner allows")
	}
	ctx = requester.With(ctx, from) // the tools reach the agent's state with from's rights
	d := h.c.daemon
	caps, err := d.Caps(ctx, agent)
	if err != nil {
		return nil, err
	}
	for _, ic := range caps {
		if !slices.Contains(ic.Tools, method) {
			continue
		}
		tools, _, err := d.Tools(ctx, agent, ic.ID)
		if err != nil {
			return nil, err
		}
		return tools.CallTool(ctx, method, params)
	}
	return nil, fmt.Errorf("%w: %s", nostrrpc.ErrMethodNotFound, method)
}

// followAgents reads the daemon's Changes until ctx ends: peers and the
// state replicators follow the new interests at once. A change also comes
// when a recomposition reaches new lessons, so the rest runs only when the
// agents or their capabilities changed (agentsFingerprint): the agents
// beat at once, so the directory sees new agents and capabilities, and
// each agent's DM relay list (kind 10050) goes out if it has not yet.
func (c *ServeCommand) followAgents(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.daemon.Changes():
		case <-c.cluster.Changed(): // --postgres: an agent started or stopped here
			if err := c.pickupTasks(ctx); err != nil && ctx.Err() == nil {
				slog.Warn("picking up the tasks of the agents running here", "err", err)
			}
		}
		if c.peers != nil {
			c.peers.Refresh()
		}
		c.asm.sup.Refresh() // an agent installed or removed
		c.rt.rpcPeers.Changed()
		c.agentsChanged(ctx)
	}
}

// agentsChanged beats and announces the agents if they or their
// capabilities changed since the last call.
func (c *ServeCommand) agentsChanged(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fp := c.agentsFingerprint(ctx)
	if fp == c.rt.lastAgents {
		return
	}
	c.rt.lastAgents = fp
	if c.rt.quiet.Err() == nil {
		if err := c.rt.beat.Beat(ctx); err != nil {
			slog.Warn("heartbeat after an agent change", "err", err)
		}
	}
	c.rt.cvmAnn.Changed()
	for _, pk := range c.agentKeys() {
		if err := c.rt.dm.Announce(ctx, pk); err != nil {
			slog.Warn("announcing the agent's DM relays", "agent", pk, "err", err)
		}
	}
}
