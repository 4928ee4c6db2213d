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
	"sync/atomic"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/agentd/nostrrpc"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/internal/metrics"
)

// serveRuntime is the capability runtime of `agentnode serve`: the chat
// model, the tool bindings, JSON-RPC over kind 25910 between agents (a
// client for nuwa_a2a and remote calls, a server answering calls to the
// local agents) and the NIP-17 DM service.
type serveRuntime struct {
	model    *llm.Client // nil without a configured model
	bindings *bindings.Runner
	// rpc and dm are set once the listen address is known, while the
	// daemon may already call agentsChanged and nuwa_a2a: atomic.
	rpc    atomic.Pointer[nostrrpc.Client]
	rpcSrv *nostrrpc.Server
	dm     atomic.Pointer[dm.Service]
	dir    *directory.Directory   // the agent directory (serve_directory.go)
	beat   *directory.Heartbeater // the local agents' 30333 heartbeats
	// beating is beat once started: the daemon's agentsChanged may run
	// before, and reads it from its own goroutine.
	beating atomic.Pointer[directory.Heartbeater]

	reg       *registry.Registry // capability packages the relay holds (serve_endpoints.go)
	unhookReg func()

	metrics       *metrics.Metrics // /metrics (serve_metrics.go)
	unhookMetrics func()

	agentsMu   sync.Mutex
	lastAgents string // agentsFingerprint at the last agentsChanged
}

// agentsMoved records fp and reports whether it differs from the last one.
func (rt *serveRuntime) agentsMoved(fp string) bool {
	rt.agentsMu.Lock()
	defer rt.agentsMu.Unlock()
	moved := fp != rt.lastAgents
	rt.lastAgents = fp
	return moved
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

// openRuntime builds the model client and the bindings runner; the daemon
// is opened with them. Nothing runs yet.
func (c *ServeCommand) openRuntime(logger *slog.Logger) error {
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
		logger.Info("chat model", "model", cfg.Model, "base_url", cfg.BaseURL)
	}
	c.openMetrics()
	bcfg := c.bindingsConfig()
	bcfg.A2A = lateA2A{c}
	c.rt.bindings = bindings.New(bcfg)
	return nil
}

// daemonRuntime sets the daemon's capability runtime fields.
func (c *ServeCommand) daemonRuntime(cfg *agentd.Config) {
	cfg.State = c.asm.rt
	cfg.Bindings = countedBindings{agentd.RunnerBindings(c.rt.bindings), c.rt.metrics}
	cfg.Revoked = c.revoked
	cfg.Capabilities = agentd.RegistryResolver(c.rt.reg)
	if c.rt.model != nil {
		cfg.Model = c.rt.model
	}
	if c.file != nil { // "models" and "router" (serve_config_models.go)
		cfg.Models, cfg.RouterIdle = c.file.Routing.models(), c.file.Routing.idle()
	}
}

// startRuntime starts what needs the daemon and the listen address: the
// kind-25910 client (local relay and every --peer) and server, and the DM
// service. It runs before the listener serves, so an agent's DM relay list
// is out before the first client asks.
func (c *ServeCommand) startRuntime(ctx context.Context, logger *slog.Logger) error {
	local := "ws://" + c.Addr()
	c.rt.rpc.Store(nostrrpc.NewClient(nostrrpc.ClientConfig{Relays: append([]string{local}, c.Config.Peers...),
		Keys: c.daemon.SecretKey, Logger: logger.With("component", "a2a")}))
	c.rt.rpcSrv = nostrrpc.NewServer(nostrrpc.ServerConfig{Source: c.relay, Publish: c.relay.Publish,
		Keys: c.localKey, Handler: nostrrpc.HandlerFunc(c.serveRPC), Logger: logger.With("component", "a2a-server")})
	c.rt.rpcSrv.Start()
	if err := c.rt.dir.Start(ctx); err != nil {
		return err
	}
	if err := c.rt.beat.Start(ctx); err != nil {
		return err
	}
	c.rt.beating.Store(c.rt.beat)
	if err := c.startACP(ctx); err != nil {
		return err
	}
	svc := dm.New(dm.Config{Source: c.relay, Publish: c.relay.Publish, Agents: c.agentKeys,
		Keys: c.daemon.SecretKey, Responder: dm.ResponderFunc(c.respondDM),
		StatePath: filepath.Join(c.Config.DataDir, "dm", "state.json"),
		RelayURLs: c.dmRelayURLs(local), Logger: logger.With("component", "dm")})
	if err := svc.Start(ctx); err != nil {
		return err
	}
	c.rt.dm.Store(svc)
	return nil
}

// closeRuntime stops the DM service, the 25910 server and client and the
// bindings (MCP sessions and processes).
func (c *ServeCommand) closeRuntime(ctx context.Context) error {
	if c.rt == nil {
		return nil
	}
	var errs []error
	if svc := c.rt.dm.Swap(nil); svc != nil {
		errs = append(errs, svc.Close(ctx))
	}
	if c.rt.rpcSrv != nil {
		errs = append(errs, c.rt.rpcSrv.Close())
	}
	if c.rt.beating.Swap(nil) != nil {
		offCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_ = c.rt.beat.Offline(offCtx) // best effort: peers learn at once that the agents left
		cancel()
		errs = append(errs, c.rt.beat.Close())
	}
	errs = append(errs, c.closeACP())
	if c.rt.dir != nil {
		errs = append(errs, c.rt.dir.Close())
	}
	if rpc := c.rt.rpc.Swap(nil); rpc != nil {
		errs = append(errs, rpc.Close())
	}
	if c.rt.unhookReg != nil {
		c.rt.unhookReg()
	}
	if c.rt.unhookMetrics != nil {
		c.rt.unhookMetrics()
	}
	if c.rt.bindings != nil {
		errs = append(errs, c.rt.bindings.Close())
	}
	return errors.Join(errs...)
}

// agentKeys are the local agents' pubkeys.
func (c *ServeCommand) agentKeys() []string {
	var pks []string
	for _, a := range c.daemon.List() {
		pks = append(pks, a.PubKey)
	}
	return pks
}

// localKey is a local agent's secret key; ok is false for any other key.
func (c *ServeCommand) localKey(pubkey string) (string, bool) {
	if !c.isLocal(pubkey) {
		return "", false
	}
	sk, err := c.daemon.SecretKey(pubkey)
	return sk, err == nil
}

// respondDM answers a NIP-17 DM through the agent's chat, the sender's
// pubkey being the conversation.
func (c *ServeCommand) respondDM(ctx context.Context, agent, from, text string) (string, error) {
	if !c.dmAllowed(ctx, agent, from) {
		return "", dm.ErrNoAnswer
	}
	answer, err := c.chatAnswer(ctx, agent, from, text)
	if errors.Is(err, agentd.ErrRevoked) { // a revoked agent answers nothing, not even an apology
		return "", dm.ErrNoAnswer
	}
	return answer, err
}

// chatAnswer runs one message through the agent's chat (router and model
// loop) and returns the answer; a revoked agent fails (agentd.ErrRevoked).
func (c *ServeCommand) chatAnswer(ctx context.Context, agent, conversation, text string) (string, error) {
	r, err := c.daemon.Chat(ctx, agent, conversation, text)
	return r.Answer, err
}

// lateA2A forwards nuwa_a2a calls to the 25910 client, which exists only
// once the listen address is known.
type lateA2A struct{ c *ServeCommand }

func (l lateA2A) CallAgent(ctx context.Context, from, target, method string, params json.RawMessage) (json.RawMessage, error) {
	rpc := l.c.rt.rpc.Load()
	if rpc == nil {
		return nil, capabilities.Errorf(capabilities.CodeExecutionFailed, "the node is not serving yet")
	}
	return rpc.CallAgent(ctx, from, target, method, params)
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

// agentsChanged is the daemon's OnInterestsChange: peers sync the new
// interests. It also fires when a recomposition reaches new lessons, so
// the rest runs only when the agents or their capabilities changed
// (agentsFingerprint): the agents beat at once, so the directory sees new
// agents and capabilities, and each agent's DM relay list (kind 10050)
// goes out if it has not yet.
func (c *ServeCommand) agentsChanged() {
	c.refreshPeers()
	if c.rt == nil {
		return
	}
	// Before startRuntime (the daemon's loop may call this while
	// agentd.Open runs, before c.daemon is even set) there is nothing to
	// do: starting the heartbeater and the DM service beats and announces
	// every agent. Loading beating orders this after c.daemon's store.
	beat, svc := c.rt.beating.Load(), c.rt.dm.Load()
	if beat == nil || svc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !c.rt.agentsMoved(c.agentsFingerprint(ctx)) {
		return
	}
	if err := beat.Beat(ctx); err != nil {
		slog.Warn("heartbeat after an agent change", "err", err)
	}
	for _, pk := range c.agentKeys() {
		if err := svc.Announce(ctx, pk); err != nil {
			slog.Warn("announcing the agent's DM relays", "agent", pk, "err", err)
		}
	}
}
