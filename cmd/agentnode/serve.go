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

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/peers"
	"github.com/agentnode/agentnode/lessons"
	"github.com/agentnode/agentnode/relay"
)

func init() {
	commands["serve"] = command{"run the node: the embedded relay and the agent daemon", runServe}
}

// Defaults of a zero-configuration node.
const (
	DefaultListen  = "127.0.0.1:7447"
	DefaultDataDir = "./agentnode-data"
)

// ServeConfig is the configuration of `agentnode serve`.
type ServeConfig struct {
	Listen   string // host:port to listen on
	DataDir  string // where events and indexes live
	LogLevel string // debug, info, warn, error
	LogJSON  bool   // JSON logs instead of text

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

// ServeCommand runs the node until its context ends.
type ServeCommand struct {
	Config ServeConfig
	m      *Main
	relay  *relay.Relay
	daemon *agentd.Daemon
	server *http.Server
	ln     net.Listener

	peers       *peers.Syncer // nil without --peer
	unhookPeers func()
	peersDone   <-chan struct{}
	stopPeers   context.CancelFunc

	asm *serveState   // the Agent State Model runtime and replicators (serve_state.go)
	rt  *serveRuntime // model, bindings, 25910 client/server, DMs (serve_runtime.go)
	acp *serveACP     // Agent Context Protocol endpoint, tasks, consent (serve_acp.go)

	file *serveFile // --config as read by ParseFlags (serve_config.go)
}

// FlagSet declares serve's flags, bound to c.Config, with environment defaults.
func (c *ServeCommand) FlagSet() *flag.FlagSet {
	fs := c.m.newFlagSet("serve", "serve [--listen ADDR] [--data DIR] [--log-level LEVEL] [--log-json]\n    [--passphrase-file F] [--trust-allow NPUB]... [--trust-follows] [--trust-disable RULE]... [--config FILE] [--peer URL]...")
	c.Config.Peers = nil // defaults from the environment; --peer adds to them
	for _, p := range strings.Split(c.m.envOr("AGENTNODE_PEERS", ""), ",") {
		if p = strings.TrimSpace(p); p != "" {
			c.Config.Peers = append(c.Config.Peers, p)
		}
	}
	fs.StringVar(&c.Config.Listen, "listen", c.m.envOr("AGENTNODE_LISTEN", DefaultListen), "address to listen on (env AGENTNODE_LISTEN)")
	fs.StringVar(&c.Config.DataDir, "data", c.m.envOr("AGENTNODE_DATA", DefaultDataDir), "data directory (env AGENTNODE_DATA)")
	fs.StringVar(&c.Config.LogLevel, "log-level", c.m.envOr("AGENTNODE_LOG_LEVEL", "info"), "debug, info, warn or error (env AGENTNODE_LOG_LEVEL)")
	fs.BoolVar(&c.Config.LogJSON, "log-json", false, "write logs as JSON lines")
	fs.StringVar(&c.Config.PassphraseFile, "passphrase-file", "", "file holding the passphrase that encrypts agent keys (NIP-49); else env AGENTNODE_PASSPHRASE")
	fs.Var((*stringList)(&c.Config.TrustAllow), "trust-allow", "trust lessons by this pubkey (npub or hex), and agents it owns as siblings; repeatable")
	fs.BoolVar(&c.Config.TrustFollows, "trust-follows", false, "trust pubkeys the agent's owner follows (kind 3, one hop)")
	fs.Var((*stringList)(&c.Config.Peers), "peer", "a relay (ws:// or wss://) to sync the agents' definitions, lessons, comments, profiles and claims with; repeatable (env AGENTNODE_PEERS, comma-separated)")
	fs.StringVar(&c.Config.ConfigFile, "config", c.m.envOr("AGENTNODE_CONFIG", ""), "JSON config file with a \"trust\" section (env AGENTNODE_CONFIG); the --trust-* flags add to it or override it")
	fs.Var((*stringList)(&c.Config.TrustDisable), "trust-disable", "switch a trust rule off (self, owner, definition-author, sibling, allowlist, follows); repeatable")
	return fs
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
	if ctx.Err() == nil {
		return err
	}
	slog.Info("stopped during startup", "cause", context.Cause(ctx).Error(), "step", err.Error())
	return nil
}

// Open opens the relay and binds the listener; nothing is served yet. If a
// step fails, what the earlier ones opened is closed again (with a fresh
// context: ctx may be the reason of the failure).
func (c *ServeCommand) Open(ctx context.Context) error {
	err := c.open(ctx)
	if err != nil {
		closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if cerr := c.Close(closeCtx); cerr != nil {
			slog.Warn("serve: closing after a failed start", "err", cerr)
		}
	}
	return err
}

// open runs Open's steps; Close undoes any prefix of them.
func (c *ServeCommand) open(ctx context.Context) error {
	logger, err := c.logger()
	if err != nil {
		return err
	}
	slog.SetDefault(logger) // libraries logging through the standard log package end up structured too
	c.relay, err = relay.Open(ctx, relay.Config{DataDir: c.Config.DataDir, Version: Version, Logger: logger, Limits: c.relayLimits(),
		TrustedProxies: c.httpConfig().trusted})
	if err != nil {
		return err
	}
	if err := c.openPeers(logger); err != nil {
		return err
	}
	if err := c.openState(ctx, logger); err != nil { // before the daemon, whose agent changes it follows
		return err
	}
	if err := c.openRuntime(logger); err != nil {
		return err
	}
	if err := c.openRegistry(ctx, logger); err != nil {
		return err
	}
	if err := c.openConsent(ctx); err != nil {
		return err
	}
	if err := c.openDaemon(ctx, logger); err != nil {
		return err
	}
	c.openDirectory(logger)
	if err := c.openACP(ctx, logger); err != nil {
		return err
	}
	if c.ln, err = net.Listen("tcp", c.Config.Listen); err != nil {
		return fmt.Errorf("listen on %s: %w", c.Config.Listen, err)
	}
	handler, err := c.mountEndpoints(logger)
	if err != nil {
		return err
	}
	c.server = c.httpConfig().newServer(handler, logger)
	logger.Info("agentnode listening", "addr", c.ln.Addr().String(), "url", "ws://"+c.ln.Addr().String(), "version", Version)
	return nil
}

// Addr is the bound listen address (useful with port 0).
func (c *ServeCommand) Addr() string { return c.ln.Addr().String() }

// Serve serves until ctx ends.
func (c *ServeCommand) Serve(ctx context.Context) error {
	peerCtx, stop := context.WithCancel(context.Background())
	c.stopPeers, c.peersDone = stop, c.runPeers(peerCtx)
	c.startState()
	if err := c.startRuntime(ctx, slog.Default()); err != nil {
		return stoppedOr(ctx, fmt.Errorf("serve: %w", err))
	}
	errc := make(chan error, 1)
	go func() { errc <- c.server.Serve(c.ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		slog.Info("shutting down", "cause", context.Cause(ctx).Error())
		return nil
	}
}

// Close stops accepting, stops the agent daemon, closes client
// connections and the stores.
func (c *ServeCommand) Close(ctx context.Context) error {
	var errs []error
	if c.server != nil {
		if err := c.server.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	if c.ln != nil {
		c.ln.Close() // Shutdown closes only a listener being served: a stop during startup comes first
	}
	c.closePeers(ctx)
	errs = append(errs, c.closeRuntime(ctx))
	errs = append(errs, c.closeState(ctx))
	if c.daemon != nil {
		errs = append(errs, c.daemon.Close(ctx))
	}
	if c.relay != nil {
		errs = append(errs, c.relay.Close(ctx))
	}
	return errors.Join(errs...)
}

// closePeers stops the peer syncer and waits for it (until ctx ends).
func (c *ServeCommand) closePeers(ctx context.Context) {
	if c.unhookPeers != nil {
		c.unhookPeers()
	}
	if c.stopPeers == nil {
		return
	}
	c.stopPeers()
	select {
	case <-c.peersDone:
	case <-ctx.Done():
		slog.Warn("peer sync did not stop in time")
	}
}

func (c *ServeCommand) logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.Config.LogLevel)); err != nil {
		return nil, usagef("serve: --log-level %q: want debug, info, warn or error", c.Config.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
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
		Trust: trust, Passphrase: pass, Logger: logger, OnInterestsChange: c.agentsChanged}
	c.daemonRuntime(&cfg)
	c.daemon, err = agentd.Open(ctx, cfg)
	if err != nil {
		return err
	}
	h := c.daemon.Handler()
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
