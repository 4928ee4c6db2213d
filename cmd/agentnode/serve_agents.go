package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/cluster"
	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/contextvm"
	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/agentd/nostrrpc"
	"github.com/agentnode/agentnode/agentd/requester"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/replicate"
	"github.com/agentnode/agentnode/agentd/strangers"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/capabilities/mcpserver"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/httpauth"
	"github.com/agentnode/agentnode/internal/metrics"
	"github.com/agentnode/agentnode/internal/redact"
	"github.com/agentnode/agentnode/relay"
	"github.com/agentnode/agentnode/relay/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"
)

// The agents' side of serve, in Open's order: the Agent State Model, the
// runtime (model, bindings, 25910, DMs), the capability registry, consent
// and the /acp endpoint, the directory and heartbeats, strangers' budgets,
// and the agents as ContextVM servers.

// directoryTTL is how long an owner's verified agents are cached: the
// directory is consulted for every batch sent and event received.
const directoryTTL = time.Second

// serveState is the Agent State Model of `agentnode serve`: the runtime on
// <data>/state.db (the store `agentnode state` opens too; SQLite in WAL
// mode with a busy timeout and BEGIN IMMEDIATE, so both processes may
// write, and the replicators poll the op log for the CLI's commits) and a
// replicate.Supervisor running one replicator per installed agent, pushing
// and pulling op events on the local relay (in-process) and on every
// --peer relay (websocket, NIP-42 AUTH with the agent's key). docs/ASM.md §9.
type serveState struct {
	rt  *state.Runtime
	sup *replicate.Supervisor
	log *slog.Logger
}

// openState opens the state runtime in the data directory and builds the
// replicators' supervisor. Nothing runs until Serve.
func (c *ServeCommand) openState(ctx context.Context, logger *slog.Logger) error {
	rt, err := state.Open(ctx, state.Options{Dir: c.Config.DataDir, Logger: logger, Schemas: registrySchemas{c}})
	if err != nil {
		return fmt.Errorf("serve: open state in %s: %w", c.Config.DataDir, err)
	}
	c.onClose(rt.Close)
	log := logger.With("component", "state")
	if err := c.cluster.OpenState(ctx, rt, log); err != nil { // --postgres: a cache of the shared op log
		return fmt.Errorf("serve: %w", err)
	}
	dir := replicate.NewCachedDirectory(replicate.DirectoryFunc(c.verifiedAgents), directoryTTL, nil)
	c.onClose(unhooked(c.relay.OnStored(func(evt *nostr.Event) {
		if replicate.ChangesOwners(evt) {
			dir.Invalidate()
		}
	})))
	c.asm = &serveState{rt: rt, log: log, sup: replicate.NewSupervisor(replicate.SupervisorConfig{
		Agents: c.ownedAgents, SecretKey: c.secretKey, Local: c.relay, Peers: c.Config.Peers, Store: rt.Store(),
		Template: replicate.Config{Directory: dir, Schemas: rt.Schemas(), Logger: log,
			AntiEntropyInterval: c.antiEntropyInterval()},
		Logger: log})}
	return nil
}

// State is the Agent State Model runtime (after Open).
func (c *ServeCommand) State() *state.Runtime {
	if c.asm == nil {
		return nil
	}
	return c.asm.rt
}

// Replicators returns the running replicators by agent pubkey (tests,
// status).
func (c *ServeCommand) Replicators() map[string]*replicate.Replicator {
	if c.asm == nil {
		return map[string]*replicate.Replicator{}
	}
	return c.asm.sup.Replicators()
}

// ownedAgents are the installed agents that have an owner (agent ->
// owner): those whose state replicates.
func (c *ServeCommand) ownedAgents() map[string]string {
	want := map[string]string{}
	for _, a := range c.daemon.List() {
		if a.Owner != "" && c.runsHere(a.PubKey) {
			want[a.PubKey] = a.Owner
		}
	}
	return want
}

// verifiedAgents are owner's agents on the local relay: those its latest
// kind 14199 lists whose own latest kind 0 names the owner
// (relay.VerifyAgent: the two-way NIP-AE link). They read the owner's
// shared state and may write it.
func (c *ServeCommand) verifiedAgents(ctx context.Context, owner string) ([]string, error) {
	linked, err := relay.OwnerAgents(ctx, c.verifyReader(), owner) // one claims read, one profile query; what the relay lacks is looked up
	if err != nil {
		return nil, err
	}
	var agents []string
	for _, v := range linked {
		if v.Verified {
			agents = append(agents, v.Agent)
		}
	}
	return agents, nil
}

// registrySchemas is the state runtime's SchemaSource: the capability
// registry over the node's relay (NIP-8: "$id MUST resolve via local cache →
// Registry"). It resolves the capability the URI names — the latest
// version, by the registry's author rule (docs/REGISTRY.md), the caller's
// owner preferred — and answers
// its schema when the package declares exactly that $id. One lookup by
// name per unknown schema: nothing scans the store.
type registrySchemas struct {
	c *ServeCommand // its registry is built after the state runtime opens
}

var _ state.SchemaSource = registrySchemas{}

// FindSchema implements state.SchemaSource.
func (s registrySchemas) FindSchema(ctx context.Context, capName, uri string, trusted ...string) (string, []byte, bool, error) {
	reg := s.c.rt.reg
	if reg == nil {
		return "", nil, false, nil
	}
	e, err := reg.Resolve(ctx, capName, "", trusted...)
	if errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrAmbiguous) || errors.Is(err, registry.ErrBadRef) {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, err
	}
	if e.Package == nil || e.Package.SchemaURI() != uri {
		return "", nil, false, nil
	}
	return e.Package.Metadata.ID, e.Package.Schema, true, nil
}

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
	cvm      *contextvm.Server    // the local agents as ContextVM servers
	cvmAnn   *contextvm.Announcer // their CEP-6 announcements
	host     *cap.Host            // the agents' CAP host (agentHost)
	hostOnce sync.Once
	// strangers is the budget of strangers' DMs and 25910 calls
	strangers *strangers.Budget
	dir       *directory.Directory   // the agent directory
	beat      *directory.Heartbeater // the local agents' 30333 heartbeats
	// quiet ends when silence is called: the heartbeats stop without an
	// offline beat, as when a node dies (heartbeat_e2e_test.go).
	quiet   context.Context
	silence context.CancelFunc

	reg     *registry.Registry // capability packages the relay holds
	metrics *metrics.Metrics   // /metrics (serve_http.go)

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
	bcfg.Nostr = c.contextVMTransport(logger) // nostr: service_uris
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
	if c.file != nil { // "models" and "router" (serve_config.go)
		cfg.Models, cfg.RouterIdle = c.file.Models.models(), c.file.Router.idle()
		if m := c.file.Router.EmbeddingModel; m != "" && c.rt.model != nil {
			cfg.Embedder, cfg.EmbedThreshold = llmEmbedder{c.rt.model, m}, c.file.Router.EmbeddingThreshold
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

// The node's protocol endpoints beside the relay. They sit in front of the
// relay (serveMux) because the relay takes every websocket upgrade as a
// Nostr connection, and /acp and /cap/agents/{agent} speak JSON-RPC over
// websockets too.
const (
	pathACP = cluster.PathACP       // Agent Context Protocol (docs/AGENT-CONTEXT-PROTOCOL.md)
	pathCAP = "/cap/agents/{agent}" // CAP over JSON-RPC, per agent (docs/CAP.md)
)

// openRegistry loads the capability registry from the relay and keeps it
// live (docs/REGISTRY.md). The daemon resolves installs through it. Its
// seen log (<data>/registry/seen.jsonl) remembers which author of a name
// this node saw first; the trust allowlist's authors are preferred.
func (c *ServeCommand) openRegistry(ctx context.Context, logger *slog.Logger) error {
	seen, err := registry.OpenSeenLog(filepath.Join(c.Config.DataDir, "registry", "seen.jsonl"))
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	c.onClose(closeErr(seen.Close))
	c.rt.reg = registry.New(c.verifyReader(), registry.WithLogger(logger.With("component", "registry")),
		registry.WithSeenLog(seen), registry.WithPreferredAuthors(c.trustConfig().Allowlist...))
	c.onClose(unhooked(c.relay.OnStored(c.rt.reg.Index))) // before Load: nothing stored meanwhile is missed
	if err := c.rt.reg.Load(ctx); err != nil {
		return fmt.Errorf("serve: load the capability registry: %w", err)
	}
	logger.Info("capability registry loaded", "packages", c.rt.reg.Len())
	return nil
}

// mountEndpoints builds the top-level handler: /acp, CAP and MCP, then
// the relay for everything else.
func (c *ServeCommand) mountEndpoints(logger *slog.Logger) (http.Handler, error) {
	token, err := agentd.ReadToken(c.Config.DataDir)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	host := c.agentHost()
	hs := c.httpConfig()
	mux := http.NewServeMux()
	// --postgres: requests for an agent another instance runs go there (agentd/cluster)
	mux.Handle(pathACP, c.cluster.Forward(c.acp.svc, cluster.ACPTarget(hs.MaxBodyBytes)))
	mux.Handle(pathCAP, c.cluster.Forward(cap.Handler(host, func(r *http.Request, _ string) error {
		return httpauth.Equal(token, httpauth.Token(r))
	}, hs.jsonrpcOptions(logger.With("component", "cap"))), cluster.PathAgent))
	mcp := mcpserver.New(c.rt.reg, host, mcpserver.Options{Name: "agentnode", Version: Version,
		Logger: logger.With("component", "mcp"), MaxBodyBytes: hs.MaxBodyBytes,
		SessionIdle: hs.MCPSessionIdle, MaxSessions: hs.MCPMaxSessions,
		MaxSessionsPerIP: hs.MCPMaxSessionsPerIP, SessionUnused: hs.MCPSessionUnused,
		ClientIP:  func(r *http.Request) string { return policies.ClientIP(r, hs.trusted) },
		Authorize: func(_ context.Context, _, tok string) error { return httpauth.Equal(token, tok) }})
	mcpserver.Mount(mux, mcp)
	c.cluster.Mount(mux, c.relay, mcp) // --postgres: the agents' API read fresh, writes and per-agent MCP forwarded
	c.mountWeb(mux, token, logger)
	mux.Handle("/", c.blobs.Wrap(c.relay))           // Blossom's paths (serve_relay.go), else the relay
	return c.rt.metrics.HTTP(c.relay.Shed(mux)), nil // 503 while memory is near its ceiling (relay/conns.go); counted by route (serve_http.go)
}

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
	cfg.RemoteTimeout = c.conf().Directory.RemoteTimeout
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

// agentCapacity is how many tasks a local agent advertises it takes at
// once in its heartbeats.
const agentCapacity = 4

// openDirectory builds the agent directory (docs/DIRECTORY.md) over the
// relay (its Run loads what the relay holds) and the heartbeater of the
// local agents. Nothing runs yet.
func (c *ServeCommand) openDirectory(ctx context.Context, logger *slog.Logger) error {
	var allow []string
	for _, a := range c.trustConfig().Allowlist {
		if pk, err := events.ParsePubKey(a); err == nil {
			allow = append(allow, pk)
		}
	}
	dc := c.conf().Directory
	dcfg := directory.Config{Source: c.relay, Allowlist: allow,
		HeartbeatTTL: dc.TTL,
		Local:        func(pk string) bool { return slices.Contains(c.agentKeys(), pk) },
		Logger:       logger.With("component", "directory")}
	c.cluster.ConfigureDirectory(&dcfg) // --postgres: in the database
	if dcfg.Registrations == nil {      // one node: registrations (proven and spec-form) survive a restart
		regs, err := directory.OpenFileRegistrations(filepath.Join(c.Config.DataDir, "directory", "registrations.json"))
		if err != nil {
			return err
		}
		dcfg.Registrations = regs
	}
	c.rt.dir = directory.New(dcfg)
	c.rt.beat = directory.NewHeartbeater(directory.HeartbeaterConfig{Agents: c.agentKeys,
		Interval: dc.Heartbeat,
		Keys:     c.daemon.SecretKey, Status: c.agentStatus, Publish: c.relay.Publish,
		Logger: logger.With("component", "heartbeat")})
	c.rt.quiet, c.rt.silence = context.WithCancel(context.Background())
	c.onClose(func(context.Context) error { c.rt.silence(); return nil })
	return nil
}

// runBeats beats for the local agents until ctx ends, then sends their
// offline beat (best effort: peers learn at once that the agents left).
func (c *ServeCommand) runBeats(ctx context.Context) error {
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.rt.quiet, cancel)()
	if err := c.rt.beat.Run(bctx); err != nil {
		return err
	}
	<-ctx.Done() // silenced: the part still runs until stopped
	if c.rt.quiet.Err() != nil {
		return nil
	}
	offCtx, offCancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer offCancel()
	_ = c.rt.beat.Offline(offCtx)
	return nil
}

// agentStatus is what a local agent's heartbeat says: its installed
// capabilities (package names and their tools) and its load.
func (c *ServeCommand) agentStatus(agent string) directory.Status {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st := directory.Status{Status: events.StatusActive, Capacity: agentCapacity, Load: c.agentLoad(agent)}
	if st.Load >= st.Capacity {
		st.Status = events.StatusBusy
	}
	caps, _ := c.daemon.Caps(ctx, agent)
	for _, ic := range caps {
		st.Capabilities = append(st.Capabilities, ic.Name)
		st.Capabilities = append(st.Capabilities, ic.Tools...)
	}
	if a, err := c.daemon.Lookup(agent); err == nil {
		st.Card = &events.AgentCard{Name: a.Name}
	}
	return st
}

// serveStrangers is the --config "strangers" section: the budget of what
// senders an agent does not know cost it, shared by NIP-17 DMs and kind
// 25910 calls (docs/DM.md, "Strangers"). A missing rate takes its default.
type serveStrangers struct {
	PerSender serveRate `json:"per_sender"`
	PerAgent  serveRate `json:"per_agent"`
	Global    serveRate `json:"global"`
}

// serveRate is a token bucket (strangers.Rate): burst messages, then one
// per every_seconds; a negative burst turns it off.
type serveRate struct {
	Burst int           `json:"burst"`
	Every time.Duration `json:"every_seconds" unit:"s"`
}

func (r serveRate) rate() strangers.Rate { return strangers.Rate(r) }

// check refuses a rate that cannot work.
func (s *serveStrangers) check(string) error {
	for name, r := range map[string]serveRate{"per_sender": s.PerSender, "per_agent": s.PerAgent, "global": s.Global} {
		if err := r.rate().Check(name); err != nil {
			return fmt.Errorf(`"strangers": %v`, err)
		}
	}
	return nil
}

// strangersBudget is the node's strangers' budget.
func (c *ServeCommand) strangersBudget() *strangers.Budget {
	s := c.conf().Strangers
	return strangers.New(strangers.Config{PerSender: s.PerSender.rate(), PerAgent: s.PerAgent.rate(), Global: s.Global.rate()})
}

// dmKnown reports whether from is known to agent over DMs: its owner, a
// key of "dm"'s allow list, or a verified sibling.
func (c *ServeCommand) dmKnown(ctx context.Context, agent, from string) bool {
	return c.conf().DM.Knows(c.agentOwner(agent), from, c.siblingOwner(ctx, from))
}

// a2aKnown is dmKnown for kind-25910 callers ("a2a"'s allow list).
func (c *ServeCommand) a2aKnown(ctx context.Context, agent, from string) bool {
	return c.conf().A2A.Knows(c.agentOwner(agent), from, c.siblingOwner(ctx, from))
}

// strangerStats are the DM service's and the budget's counts for /metrics.
func (c *ServeCommand) strangerStats() metrics.StrangerStats {
	var out metrics.StrangerStats
	if c.rt.dm != nil {
		st := c.rt.dm.Stats()
		out.DMWraps, out.DMMessages = st.Wraps, st.Messages
	}
	if b := c.rt.strangers; b != nil {
		st := b.Stats()
		out.Verdicts = map[string]int64{"known": st.Known, "allowed": st.Allowed, "notified": st.Notified, "dropped": st.Dropped, "refused": st.Refused}
		out.Dry = map[string]int64{"sender": st.DrySender, "agent": st.DryAgent, "global": st.DryGlobal}
	}
	return out
}

// serveContextVM is the --config "contextvm" section (docs/CONTEXTVM.md):
// every local agent is a ContextVM server (MCP over Nostr) on the node's
// relay. Every key is optional; absent or zero keeps the default.
type serveContextVM struct {
	// Encryption: "optional" (default: answer as asked), "required"
	// (refuse plaintext requests) or "disabled" (ignore gift wraps).
	Encryption string `json:"encryption"`
	// MaxSessions caps the live (agent, client) sessions (default 1000;
	// one more evicts the least recently used).
	MaxSessions int `json:"max_sessions" min:"0"`
	// SessionIdle closes a session with no message for this long
	// (default 1800 s).
	SessionIdle time.Duration `json:"session_idle_seconds" unit:"s" min:"0"`
}

// check refuses an unknown encryption.
func (s *serveContextVM) check(string) error {
	if _, err := contextvm.ParseEncryption(s.Encryption); err != nil {
		return fmt.Errorf(`"contextvm": %v`, err)
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
	sec := c.conf().ContextVM
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
		SessionIdle: sec.SessionIdle,
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
		own := append([]string{"ws://" + c.Addr()}, c.Config.Peers...)
		if len(relays) == 0 {
			relays = own
		}
		// Relays a package names are a stranger's choice: guarded, unless
		// they are all the node's own relay and its peers.
		network := c.relayPolicy()
		isOwn := func(r string) bool {
			return slices.ContainsFunc(own, func(o string) bool { return nostr.NormalizeURL(o) == nostr.NormalizeURL(r) })
		}
		if !slices.ContainsFunc(relays, func(r string) bool { return !isOwn(r) }) {
			network.AllowPrivate = true
		}
		return &contextvm.ClientTransport{Relays: relays, SecretKey: sk, Server: server, Network: network, Logger: log}, nil
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
	enc, _ := contextvm.ParseEncryption(c.conf().ContextVM.Encryption) // checked when parsed
	return enc
}
