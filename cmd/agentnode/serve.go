package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/cluster"
	"github.com/agentnode/agentnode/agentd/lookup"
	"github.com/agentnode/agentnode/agentd/peers"
	"github.com/agentnode/agentnode/blossom"
	"github.com/agentnode/agentnode/internal/lifecycle"
	"github.com/agentnode/agentnode/internal/memguard"
	"github.com/agentnode/agentnode/lessons"
	"github.com/agentnode/agentnode/relay"
)

// Defaults of a zero-configuration node.
const (
	DefaultListen  = "127.0.0.1:7447"
	DefaultDataDir = "./agentnode-data"
)

// ServeConfig is the configuration of `agentnode serve`.
type ServeConfig struct {
	Listen   string // host:port to listen on
	DataDir  string // where events and indexes live
	Postgres string // --postgres: events in this PostgreSQL database instead (serve_config.go)
	Blobs    string // --blobs: the Blossom blob directory (serve_relay.go); default <data>/blobs
	// LeaseTTL (--lease-ttl) and AdvertiseURL (--advertise-url) apply with
	// Postgres only: how long an agent's lease lasts without renewal, and
	// where other instances reach this one (serve_relay.go, agentd/cluster).
	LeaseTTL     time.Duration
	AdvertiseURL string
	LogLevel     string // debug, info, warn, error
	LogJSON      bool   // JSON logs instead of text

	// PassphraseFile holds the passphrase that NIP-49 encrypts agent keys
	// (else AGENTNODE_PASSPHRASE; neither: keys are stored as plain hex).
	PassphraseFile string
	// Trust is the lesson trust policy of the node's agents (docs/TRUST.md).
	TrustAllow   []string // --trust-allow: allowlisted pubkeys
	TrustFollows bool     // --trust-follows: the owner's follows (one hop)
	TrustDisable []string // --trust-disable: rules switched off
	// Peers are relays to sync the agents' events with (docs/PEERS.md).
	Peers []string
	// ConfigFile is --config: JSON with a "trust" section that the --trust-*
	// flags add to or override, and more (serve_config.go; "http":
	// serve_http.go).
	ConfigFile string
}

// ServeCommand runs the node until its context ends: Open builds every
// part in dependency order, Serve runs them (internal/lifecycle: started in
// that order, stopped in reverse, the first failure stopping the rest),
// Close releases what Open took, in reverse order.
type ServeCommand struct {
	Config ServeConfig
	m      *Main
	relay  *relay.Relay
	daemon *agentd.Daemon
	server *http.Server
	ln     net.Listener
	peers  *peers.Syncer  // nil without --peer
	lookup *lookup.Lookup // on-demand lookups of what verification lacks (serve_relay.go)

	follower *lookup.Follower // looks up the roots of stored comments (serve_relay.go)

	asm *serveState   // the Agent State Model runtime and replicators (serve_agents.go)
	rt  *serveRuntime // model, bindings, 25910 client/server, DMs (serve_agents.go)
	acp *serveACP     // Agent Context Protocol endpoint, tasks, consent (serve_agents.go)

	blobs     *blossom.Server // the Blossom server (serve_relay.go)
	blobStore *blossom.Store

	cluster cluster.Cluster // --postgres: agents placed among instances (agentd/cluster); cluster.Single alone

	file *serveFile // --config as read by ParseFlags (serve_config.go)

	level  slog.LevelVar // the log level in force (a SIGHUP may change it: serve_config.go)
	reload *serveReload  // SIGHUP handling (serve_config.go)

	closers []func(context.Context) error // what Open took, in order: Close undoes it backwards
}

// serveFlag is one of serve's flags: its name, its argument in the usage
// line ("": a switch), the environment variable that sets its default
// (comma-separated for a repeatable one), that default, its help, and
// where it goes (*string, *bool, *time.Duration, or *[]string: repeatable,
// the flags adding to the environment's).
type serveFlag struct {
	name, arg, env, def, help string
	dst                       any
}

// flags are serve's flags, in the usage line's order.
func (c *ServeCommand) flags() []serveFlag {
	cf := &c.Config
	return []serveFlag{
		{"listen", "ADDR", "AGENTNODE_LISTEN", DefaultListen, "address to listen on", &cf.Listen},
		{"data", "DIR", "AGENTNODE_DATA", DefaultDataDir, "data directory", &cf.DataDir},
		{"postgres", "URL", "AGENTNODE_POSTGRES", "", "PostgreSQL URL: the relay's events live there, shared by every instance on it, see docs/POSTGRES.md", &cf.Postgres},
		{"lease-ttl", "D", "", "", "with --postgres: how long an agent's lease on this instance lasts without renewal; another instance takes the agent over within about 1.25 times that after this one dies (default 15s, or the config's postgres.lease_ttl_seconds)", &cf.LeaseTTL},
		{"advertise-url", "URL", "AGENTNODE_ADVERTISE_URL", "", "with --postgres: the http(s) base URL other instances reach this one at, to forward requests for the agents it runs; default http:// and the listen address", &cf.AdvertiseURL},
		{"blobs", "DIR", "AGENTNODE_BLOBS", "", "directory of the Blossom server's blobs (default <data>/blobs); with --postgres, a directory every instance shares", &cf.Blobs},
		{"log-level", "LEVEL", "AGENTNODE_LOG_LEVEL", "info", "debug, info, warn or error", &cf.LogLevel},
		{"log-json", "", "", "", "write logs as JSON lines", &cf.LogJSON},
		{"passphrase-file", "F", "", "", "file holding the passphrase that encrypts agent keys (NIP-49); else env AGENTNODE_PASSPHRASE", &cf.PassphraseFile},
		{"trust-allow", "NPUB", "", "", "trust lessons by this pubkey (npub or hex), and agents it owns as siblings", &cf.TrustAllow},
		{"trust-follows", "", "", "", "trust pubkeys the agent's owner follows (kind 3, one hop)", &cf.TrustFollows},
		{"trust-disable", "RULE", "", "", "switch a trust rule off (self, owner, definition-author, sibling, allowlist, follows)", &cf.TrustDisable},
		{"config", "FILE", "AGENTNODE_CONFIG", "", "JSON config file with any of the sections " + strings.Join(configSections(), ", ") + " (docs/SERVE.md); the --trust-* flags add to it or override it", &cf.ConfigFile},
		{"peer", "URL", "AGENTNODE_PEERS", "", "a relay (ws:// or wss://) to sync the agents' definitions, lessons, comments, profiles and claims with", &cf.Peers},
	}
}

// FlagSet declares serve's flags (flags), bound to c.Config, with
// environment defaults; the usage line lists them.
func (c *ServeCommand) FlagSet() *flag.FlagSet {
	var usage []string
	for _, f := range c.flags() {
		_, list := f.dst.(*[]string)
		usage = append(usage, "[--"+strings.TrimSpace(f.name+" "+f.arg)+"]"+map[bool]string{true: "..."}[list])
	}
	fs := c.m.newFlagSet("serve", "serve "+strings.Join(usage, " "))
	for _, f := range c.flags() {
		f.bind(fs, c.m)
	}
	return fs
}

// bind declares f on fs, its default from the environment when f names a
// variable.
func (f serveFlag) bind(fs *flag.FlagSet, m *Main) {
	def, help := f.def, f.help
	_, list := f.dst.(*[]string)
	if list {
		help += "; repeatable"
	}
	if f.env != "" {
		def = m.envOr(f.env, f.def)
		help += " (env " + f.env + map[bool]string{true: ", comma-separated"}[list] + ")"
	}
	switch dst := f.dst.(type) {
	case *string:
		fs.StringVar(dst, f.name, def, help)
	case *bool:
		fs.BoolVar(dst, f.name, false, help)
	case *time.Duration:
		fs.DurationVar(dst, f.name, 0, help)
	case *[]string:
		*dst = strings.FieldsFunc(def, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
		fs.Var((*stringList)(dst), f.name, help)
	}
}

// ParseFlags reads the command line into c.Config.
func (c *ServeCommand) ParseFlags(args []string) error {
	fs := c.FlagSet()
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("serve: unexpected argument %q", fs.Arg(0))
	}
	return c.readConfigFile(fs)
}

func runServe(ctx context.Context, m *Main, args []string) error {
	c := &ServeCommand{m: m}
	if err := c.ParseFlags(args); err != nil {
		return err
	}
	if err := c.Open(ctx); err != nil {
		return stoppedOr(ctx, err)
	}
	runErr := c.Serve(ctx)
	closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(runErr, c.Close(closeCtx))
}

// stoppedOr is err, unless ctx ended: a stop requested while serve starts
// makes whatever step was running fail with ctx's error, and that is not
// a failure of serve.
func stoppedOr(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	slog.Info("stopped during startup", "cause", context.Cause(ctx).Error(), "step", err.Error())
	return nil
}

// Open builds the node, each part over the ones before it, and binds the
// listener; nothing runs yet (Serve). If a step fails, what the earlier
// ones opened is closed again (Close, with a fresh context: ctx may be the
// reason of the failure).
func (c *ServeCommand) Open(ctx context.Context) error {
	logger, err := c.logger()
	if err != nil {
		return err
	}
	slog.SetDefault(logger) // libraries logging through the standard log package end up structured too
	for _, open := range []func(context.Context, *slog.Logger) error{
		c.openReload,    // SIGHUP reloads from now on instead of killing the node
		c.openRelay,     // events, search, NIP-11: everything else reads and writes through it
		c.openBlossom,   // the blob store; installs fetch definitions' files into agents' homes
		c.listen,        // the address the 25910 client and the DM relay lists name
		c.openCluster,   // --postgres: the agents' data and leases, shared by the instances
		c.openPeers,     // --peer sync, over the relay
		c.openLookup,    // on-demand lookups on the peers and NIP-65 relays, for verification
		c.openState,     // the ASM store; its replicators follow the daemon's agents
		c.openRuntime,   // metrics, model, 25910 client, tool bindings
		c.openRegistry,  // capability packages: the daemon resolves installs through it
		c.openConsent,   // the daemon asks it whether an agent is revoked
		c.openDaemon,    // the agents, over all of the above
		c.openDirectory, // the agent directory and the local agents' heartbeats
		c.openACP,       // tasks and the /acp endpoint, over the directory and the daemon
		c.openDM,        // NIP-17 DMs and the 25910 server, answered by the daemon
		c.openContextVM, // the agents as ContextVM (MCP over Nostr) servers
		c.joinCluster,   // --postgres: every installed agent gets its lease; the handover starts them
		c.openHTTP,      // /acp, CAP, MCP, the web pages, then the relay
	} {
		if err := open(ctx, logger); err != nil {
			closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if cerr := c.Close(closeCtx); cerr != nil {
				slog.Warn("serve: closing after a failed start", "err", cerr)
			}
			return err
		}
	}
	logger.Info("agentnode listening", "addr", c.Addr(), "url", "ws://"+c.Addr(), "version", Version)
	return nil
}

// Serve runs the node's parts until ctx ends or one fails: each starts
// once the one before it is ready (the HTTP server last, so stored tasks
// are resumed, the 25910 server listens and an agent's DM relay list is
// out before the first client asks) and they stop in reverse order. A stop
// during the start is no failure.
func (c *ServeCommand) Serve(ctx context.Context) error {
	parts := []lifecycle.Part{
		lifecycle.Func("peers", c.runPeers),
		lifecycle.Func("lookups", c.runLookup),
		lifecycle.Func("state lifecycle", c.runStateLifecycle),
		lifecycle.Func("state replication", c.asm.sup.Run),
		lifecycle.Func("agent daemon", c.daemon.Run),
		lifecycle.Ready("directory", c.rt.dir.Run, c.rt.dir.Ready()), // loaded before acp and http read it
		lifecycle.Func("heartbeat", c.runBeats),
		lifecycle.Func("task deadlines", c.acp.tasks.Run),
		lifecycle.Ready("acp", c.acp.svc.Run, c.acp.svc.Ready()), // resumes stored tasks before anyone adds one
		lifecycle.Ready("a2a server", c.rt.rpcSrv.Run, c.rt.rpcSrv.Ready()),
		lifecycle.Func("a2a on peers", c.rt.rpcPeers.Run),
		lifecycle.Ready("contextvm", c.rt.cvm.Run, c.rt.cvm.Ready()),
		lifecycle.Func("contextvm announcer", c.rt.cvmAnn.Run), // at once, and after every agent change
		lifecycle.Ready("dm", c.rt.dm.Run, c.rt.dm.Ready()),
	}
	parts = append(parts, c.cluster.Parts()...) // --postgres: after DMs, which a takeover catches up on
	parts = append(parts,
		lifecycle.Func("agent changes", c.followAgents),
		lifecycle.Func("reload", c.runReload), // SIGHUP (serve_config.go)
		lifecycle.Func("http", c.runHTTP))
	if err := lifecycle.Run(ctx, parts...); err != nil {
		return stoppedOr(ctx, fmt.Errorf("serve: %w", err))
	}
	return nil
}

// Close releases what Open took, in reverse order; it is a no-op once done.
func (c *ServeCommand) Close(ctx context.Context) error {
	var errs []error
	for i := len(c.closers) - 1; i >= 0; i-- {
		errs = append(errs, c.closers[i](ctx))
	}
	c.closers = nil
	return errors.Join(errs...)
}

// onClose registers what Close must undo (after everything opened later).
func (c *ServeCommand) onClose(fn func(context.Context) error) {
	c.closers = append(c.closers, fn)
}

// unhooked adapts an unhook function to onClose.
func unhooked(unhook func()) func(context.Context) error {
	return func(context.Context) error { unhook(); return nil }
}

// closeErr adapts a Close() error to a stop function.
func closeErr(fn func() error) func(context.Context) error {
	return func(context.Context) error { return fn() }
}

// openRelay opens the embedded relay; the agents' HTTP API is mounted on
// it by openDaemon.
func (c *ServeCommand) openRelay(ctx context.Context, logger *slog.Logger) error {
	r, err := relay.Open(ctx, relay.Config{DataDir: c.Config.DataDir, Postgres: c.postgresURL(), Version: Version, Logger: logger, Limits: c.relayLimits(), Negentropy: c.relayNegentropy(),
		TrustedProxies: c.httpConfig().trusted, Operators: c.relayOperators(), AgentKindsOnly: c.agentKindsOnly(),
		AddressedKinds: c.addressedKinds()})
	if errors.Is(err, relay.ErrDataDirInUse) {
		return fmt.Errorf("%w\n  another node (`make run`?) already serves this data directory; a second node on this machine needs its own: "+
			"agentnode serve --data ./node2-data --listen 127.0.0.1:7448", err)
	}
	if err != nil {
		return err
	}
	c.relay = r
	memguard.SetProcessLimit(r.MemoryCeiling()) // the runtime's soft limit is the ceiling the relay sheds below
	c.onClose(r.Close)
	return nil
}

// listen binds the listen address: connections wait in the backlog until
// Serve serves them.
func (c *ServeCommand) listen(context.Context, *slog.Logger) error {
	ln, err := net.Listen("tcp", c.Config.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Config.Listen, err)
	}
	c.ln = ln
	c.onClose(func(context.Context) error {
		ln.Close() // closed already when it was served: Shutdown closes it
		return nil
	})
	return nil
}

// openHTTP builds the HTTP server of every endpoint; runHTTP serves it.
func (c *ServeCommand) openHTTP(_ context.Context, logger *slog.Logger) error {
	handler, err := c.mountEndpoints(logger)
	if err != nil {
		return err
	}
	c.server = c.httpConfig().newServer(handler, logger)
	return nil
}

// runHTTP serves HTTP on the listener until ctx ends, then shuts the
// server down (websocket connections are the relay's: relay.Close).
func (c *ServeCommand) runHTTP(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- c.server.Serve(c.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	slog.Info("shutting down", "cause", context.Cause(ctx).Error())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := c.server.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// Addr is the bound listen address (useful with port 0).
func (c *ServeCommand) Addr() string { return c.ln.Addr().String() }

func (c *ServeCommand) logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.Config.LogLevel)); err != nil {
		return nil, usagef("serve: --log-level %q: want debug, info, warn or error", c.Config.LogLevel)
	}
	if c.file != nil && c.file.Node.LogLevel != "" { // checked by ParseFlags
		_ = level.UnmarshalText([]byte(c.file.Node.LogLevel))
	}
	c.level.Set(level)
	opts := &slog.HandlerOptions{Level: &c.level}
	if c.Config.LogJSON {
		return slog.New(slog.NewJSONHandler(c.m.Stderr, opts)), nil
	}
	return slog.New(slog.NewTextHandler(c.m.Stderr, opts)), nil
}

// openDaemon opens the agent daemon over the relay and mounts its HTTP API
// (/api/agents) beside the relay's.
func (c *ServeCommand) openDaemon(ctx context.Context, logger *slog.Logger) error {
	pass, err := c.passphrase()
	if err != nil {
		return err
	}
	trust := c.trustConfig() // --config's trust section and the --trust-* flags
	if _, err := lessons.NewPolicy(trust); err != nil {
		return usagef("serve: %v", err)
	}
	cfg := agentd.Config{DataDir: c.Config.DataDir, Store: c.relay, Notifier: c.relay,
		Trust: trust, Passphrase: pass, Logger: logger}
	c.daemonRuntime(&cfg)
	// Definitions not here are looked up (serve_relay.go).
	cfg.FindDefinition = c.findDefinition
	cfg.DefFiles = c.defFiles()                                  // serve_relay.go
	if err := c.cluster.ConfigureDaemon(ctx, &cfg); err != nil { // --postgres: keys, records, files in the database
		return err
	}
	d, err := agentd.Open(ctx, cfg)
	if err != nil {
		return err
	}
	c.daemon = d
	c.relay.SetExempt(d.HasKey) // the pubkey allowlist never blocks the node's agents (docs/RELAY.md#management)
	c.onClose(d.Close)
	h := d.Handler()
	c.relay.Handle("/api/agents", h)
	c.relay.Handle("/api/agents/", h)
	return nil
}

// passphrase reads --passphrase-file (one line; the trailing newline is
// dropped), else AGENTNODE_PASSPHRASE; "" means agent keys are plain hex.
func (c *ServeCommand) passphrase() (string, error) {
	if c.Config.PassphraseFile == "" {
		return c.m.Getenv("AGENTNODE_PASSPHRASE"), nil
	}
	b, err := os.ReadFile(c.Config.PassphraseFile)
	if err != nil {
		return "", fmt.Errorf("serve: --passphrase-file: %w", err)
	}
	pass := strings.TrimRight(string(b), "\r\n")
	if pass == "" {
		return "", usagef("serve: --passphrase-file %s is empty", c.Config.PassphraseFile)
	}
	return pass, nil
}

// Daemon is the agent daemon (after Open).
func (c *ServeCommand) Daemon() *agentd.Daemon { return c.daemon }
