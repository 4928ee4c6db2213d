package agentd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/keystore"
	"github.com/agentnode/agentnode/capabilities/router"
	"github.com/agentnode/agentnode/lessons"
)

// Store is how the daemon reads and writes events: the embedded relay
// in-process (relay.Relay satisfies it). Publish must verify and store the
// event as a client's would be, returning NIP-01 prefixed refusals;
// QuerySync must return only events whose signatures it has verified.
type Store interface {
	Publish(ctx context.Context, evt *nostr.Event) error
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
}

// Notifier tells the daemon about every event the store stores, from any
// source (relay.Relay.OnStored satisfies it). fn runs on the storing
// goroutine and returns quickly; remove unregisters it.
type Notifier interface {
	OnStored(fn func(*nostr.Event)) (remove func())
}

// Config configures a Daemon.
type Config struct {
	// DataDir is the node's data directory; agents live in DataDir/agents.
	DataDir string
	// Store reads and publishes events (required).
	Store Store
	// Notifier, when set, makes recomposition live: stored events that
	// change an agent's inputs mark it for recomposition at once. Without
	// one, every Effective call re-reads the store (cache hits by key).
	Notifier Notifier
	// Trust is the lesson trust policy (docs/TRUST.md).
	Trust lessons.Config
	// Limits bound what composition reads (zero: lessons.DefaultLimits).
	Limits lessons.Limits
	// Passphrase, when set, NIP-49 encrypts new agent keys.
	Passphrase string
	// KeyLogN is the NIP-49 scrypt cost (0: keystore.DefaultLogN).
	KeyLogN uint8
	// Keys, when set, holds the agents' keys instead of the key files in
	// DataDir/agents (a database several instances share: agentd/agentpg;
	// it applies Passphrase and KeyLogN itself).
	Keys keystore.Keys
	// Records, when set, holds the installed agents instead of
	// DataDir/agents/agents.json (agentd/agentpg). The daemon keeps a copy;
	// Reload reads it again.
	Records Records
	// Files, when set, holds the agents' capability files (caps.json and
	// cached packages) instead of DataDir/agents/<agent>/ (agentd/agentpg).
	Files AgentFiles
	// Placement, when set, is told about every install and removal, so
	// that the agent gets (or loses) its lease among instances sharing a
	// database (*lease.Manager satisfies it). Its errors are logged: serve
	// adds every installed agent again at start (Add is idempotent).
	Placement Placement
	// Token, when set, is the HTTP API token instead of the one in
	// DataDir/agents/api.token (instances sharing a database share it).
	Token string
	// Logger receives structured logs; nil means slog.Default().
	Logger *slog.Logger
	// State is the Agent State Model runtime (*state.Runtime satisfies
	// it). It runs the state.* tools of the agents' capabilities, keeps
	// their conversation logs and receives installed packages' schemas.
	// Nil: state.* tools fail with EXECUTION_FAILED and chat keeps no log.
	State StateRuntime
	// Schemas checks an ASM schema declared by capability capID before a
	// package is installed; nil: agentd/state/schema.Parse (the check the
	// runtime's Register makes).
	Schemas func(capID string, raw json.RawMessage) error
	// Capabilities resolves capability references (did:nuwa:cap:name[@ver],
	// name[@ver], naddr) to kind-30199 events for agent cap install and
	// upgrade; nil: a capabilities/registry over Store.
	Capabilities CapResolver
	// FindDefinition, when set, is asked for a definition Install does not
	// find in Store: it looks ref up elsewhere (the peers, the author's
	// NIP-65 relays, ref.Relays) and stores it; nil error means Install
	// reads Store again. Nil: the definition must be local.
	FindDefinition func(ctx context.Context, ref DefinitionRef) error
	// Bindings runs the tools packages bind (http_get, http_post,
	// mcp_service, nuwa_a2a): a *bindings.Runner fits. Nil:
	// such tools fail with EXECUTION_FAILED.
	Bindings BindingCaller
	// Revoked, when set, reports agents their owner revoked
	// (agentd/consent): Chat, Tools and CAP refuse them with ErrRevoked.
	Revoked func(ctx context.Context, agent string) bool
	// Model is the chat model (*llm.Client satisfies it). Nil: Chat fails
	// with llm.ErrNoModel; nothing else needs a model.
	Model ChatModel
	// Models are the models capabilities' llm_requirements choose among
	// (the serve config's `models`; docs/ROUTER.md). None: requirements
	// are not checked and Model's own model answers.
	Models []router.Model
	// RouterIdle is the router's idle timeout (0 = its default, 30
	// minutes; negative = never).
	RouterIdle time.Duration
	// Embedder makes capabilities' embedding triggers match (the serve
	// config's router.embedding_model on the model endpoint's
	// /v1/embeddings); nil: they never match. EmbedThreshold is the cosine
	// similarity a match needs (0 = router.DefaultEmbedThreshold).
	Embedder       router.Embedder
	EmbedThreshold float64
	// DefFiles is how installs fetch a definition's files (deffiles.go);
	// zero: from the 1063's url and the author's servers with
	// http.DefaultClient's dialer refused (no HTTP), nothing local.
	DefFiles DefFiles
}

// Daemon runs the agents installed on a node: it keeps their keys and
// registry, publishes their profiles and lessons, and composes their
// effective behaviour from definition, nudges and trusted lessons. Its
// methods are safe for concurrent use. Open starts nothing; Run is its one
// background loop; Close releases what Open took.
type Daemon struct {
	cfg    Config
	log    *slog.Logger
	store  Store
	keys   keystore.Keys
	policy atomic.Pointer[lessons.Policy] // SetTrust replaces it (trust_reload.go)
	mcp    mcpHost                        // approved kind-4200 servers (mcpservers_run.go)
	token  string

	mu     sync.Mutex // guards reg and closed; serialises registry changes
	reg    *registry
	closed bool

	live *live // dirty tracking and compositions

	caps *capsState // installed capabilities, routers, chat histories (caps_store.go)

	interests atomic.Bool   // Interests may have changed since the last value on changes
	changes   chan struct{} // Changes: one buffered value, coalescing

	wake   chan struct{}
	unhook func()
}

// Open opens the agents directory under cfg.DataDir (creating it), loads
// the registry, checks that every agent's key is readable (so a wrong
// passphrase fails here, not at the first signature), subscribes to the
// notifier. It starts nothing: Run recomposes in the background.
func Open(ctx context.Context, cfg Config) (*Daemon, error) {
	if cfg.DataDir == "" || cfg.Store == nil {
		return nil, errors.New("agentd: Config needs DataDir and Store")
	}
	d := &Daemon{cfg: cfg, log: cfg.Logger, store: cfg.Store, wake: make(chan struct{}, 1), changes: make(chan struct{}, 1)}
	if d.log == nil {
		d.log = slog.Default()
	}
	policy, err := lessons.NewPolicy(cfg.Trust)
	if err != nil {
		return nil, fmt.Errorf("agentd: trust: %w", err)
	}
	d.policy.Store(policy)
	if err := d.openFiles(ctx); err != nil {
		return nil, err
	}
	agents := d.reg.list()
	d.live = newLive(agents)
	d.caps = newCapsState(cfg)
	d.queueAutoUpgrades(agents) // and wakes Run: first compositions
	if cfg.Notifier != nil {
		d.unhook = cfg.Notifier.OnStored(d.onStored)
	}
	d.log.Info("agent daemon opened", "agents", len(agents), "data", d.cfg.DataDir, "encrypted_keys", d.keys.Encrypts(), "trust", policy.String())
	return d, nil
}

// openFiles opens the keystore, the registry and the API token (the
// files in DataDir/agents unless Config gives them), and reads every
// registered agent's key once.
func (d *Daemon) openFiles(ctx context.Context) error {
	dir := filepath.Join(d.cfg.DataDir, "agents")
	if err := os.MkdirAll(d.cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("agentd: %w", err)
	}
	var err error
	if d.keys = d.cfg.Keys; d.keys == nil {
		if d.keys, err = keystore.Open(dir, keystore.Options{Passphrase: d.cfg.Passphrase, LogN: d.cfg.KeyLogN}); err != nil {
			return err
		}
	}
	if d.cfg.Records != nil {
		d.reg, err = loadRecords(ctx, d.cfg.Records)
	} else {
		d.reg, err = loadRegistry(filepath.Join(dir, "agents.json"))
	}
	if err != nil {
		return err
	}
	for _, a := range d.reg.agents {
		if _, err := d.keys.Secret(ctx, a.PubKey); err != nil {
			return fmt.Errorf("agentd: agent %s (%s): %w", a.Name, a.PubKey, err)
		}
	}
	if d.token = d.cfg.Token; d.token == "" {
		d.token, err = loadOrCreateToken(TokenPath(d.cfg.DataDir))
	}
	return err
}

// Close unsubscribes from the notifier; later calls fail with ErrClosed.
// Run's owner ends it first (ctx).
func (d *Daemon) Close(ctx context.Context) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	if d.unhook != nil {
		d.unhook()
	}
	if err := d.mcp.close(); err != nil {
		d.log.Warn("MCP servers stopped with errors", "err", err)
	}
	d.log.Info("agent daemon closed")
	return nil
}

// Policy is the trust policy in force.
func (d *Daemon) Policy() *lessons.Policy { return d.policy.Load() }

// signal wakes the background loop (never blocks).
func (d *Daemon) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run is the background loop, until ctx ends (then it returns nil): on
// every wake it applies pending automatic upgrades, then recomposes every
// agent marked dirty, so that the next Effective finds the prompt ready,
// and sends on Changes if Interests may have changed. One Run at a time.
func (d *Daemon) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-d.wake:
		}
		d.applyAutoUpgrades(ctx)
		for _, pk := range d.live.dirtyAgents() {
			if _, err := d.compose(ctx, pk); err != nil && ctx.Err() == nil && !errors.Is(err, ErrUnknownAgent) {
				d.log.Warn("recomposition failed", "agent", pk, "err", err)
			}
		}
		if d.interests.Swap(false) {
			select {
			case d.changes <- struct{}{}:
			default: // one value waits already: the reader sees both changes
			}
		}
	}
}

// Changes receives a value after Interests or Outbox may have changed: an
// agent installed, removed, upgraded or nudged, its capabilities changed,
// or a recomposition that saw new lessons, authors or owners. Values
// coalesce (at most one waits); one reader. agentd/peers' Refresh fits.
func (d *Daemon) Changes() <-chan struct{} { return d.changes }

// changed notes that Interests may have changed and wakes Run.
func (d *Daemon) changed() {
	d.interests.Store(true)
	d.signal()
}

// begin checks the daemon is open and locks the registry; the caller
// defers d.mu.Unlock().
func (d *Daemon) begin() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	return nil
}

// now is the time for created_at and registry stamps.
func now() time.Time { return time.Now().UTC().Truncate(time.Second) }

// onStored is the store hook (Notifier): it runs on the storing goroutine,
// so it only marks agents dirty and wakes the loop; it takes no lock that
// is held while publishing.
func (d *Daemon) onStored(evt *nostr.Event) {
	if d.live.mark(evt) {
		d.signal()
	}
}
