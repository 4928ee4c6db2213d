package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentnode/agentnode/internal/memguard"
	"github.com/agentnode/agentnode/relay/internal/khatru"
	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay/policies"
)

// Relay is the embedded relay. It is an http.Handler: websockets, NIP-11
// and the HTTP API are all served by ServeHTTP.
type Relay struct {
	cfg    Config
	log    *slog.Logger
	khatru *khatru.Router
	store  backend // store (LMDB + bluge) or pgBackend (PostgreSQL)

	connMu sync.Mutex
	conns  map[*khatru.WebSocket]struct{}

	slowConsumers atomic.Int64 // connections cut off for not reading
	refusedConns  atomic.Int64 // websockets refused by the connection bounds
	shed          atomic.Int64 // connections and HTTP requests refused while busy

	connLimit *policies.ConnLimiter // websockets per address and in all (conns.go)
	mem       *memguard.Guard       // the memory ceiling (nil: none)

	refused refusalCounts            // events the policies refused (refusals.go)
	manage  *management              // NIP-86: operators, allow and deny lists (manage.go)
	live    atomic.Pointer[limitSet] // the limits a reload may change (reload.go)

	verifyQ    atomic.Pointer[SourceQuerier] // SetVerifier (verify_sources.go)
	readyState readyCache                    // the last readiness answer (ready.go)

	stored    storedHooks // OnStored listeners
	ephemeral storedHooks // OnEphemeral listeners (ephemeral.go)
}

// Open opens (creating if needed) the data directory, or with
// Config.Postgres the database, and wires the relay. It starts no
// network listener: serve the returned Relay with an http.Server.
func Open(ctx context.Context, cfg Config) (*Relay, error) {
	if cfg.DataDir == "" && cfg.Postgres == "" {
		return nil, errors.New("relay: no data directory")
	}
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	st, err := openBackend(ctx, cfg)
	if err != nil {
		return nil, err
	}
	mgmt, err := openManagement(cfg)
	if err != nil {
		st.close()
		return nil, err
	}
	r := &Relay{cfg: cfg, log: cfg.Logger, store: st, conns: map[*khatru.WebSocket]struct{}{}, manage: mgmt}
	r.khatru = khatru.NewRouter()
	r.wire()
	if err := st.startIngest(r.announce, r.announceRemoteEphemeral); err != nil {
		st.close()
		return nil, err
	}
	if cfg.Postgres != "" {
		r.log.Info("relay opened", "store", "postgres")
	} else {
		r.log.Info("relay opened", "data", cfg.DataDir)
	}
	return r, nil
}

// openBackend picks the store: PostgreSQL when Config.Postgres is set,
// else LMDB and bluge in DataDir.
func openBackend(ctx context.Context, cfg Config) (backend, error) {
	if cfg.Postgres != "" {
		return openPGLocked(ctx, cfg)
	}
	return openStore(ctx, cfg.DataDir, cfg.Limits, cfg.Logger)
}

// wire installs storage, policies and endpoints on the khatru relay.
func (r *Relay) wire() {
	rl, lim := r.khatru.Relay, r.cfg.Limits
	r.live.Store(r.newLimitSet(lim, nil))
	rl.Log = slog.NewLogLogger(r.log.Handler(), slog.LevelWarn)
	rl.MaxMessageSize = int64(lim.MaxMessageBytes)
	rl.Info = r.info()
	r.wireBudgets(rl, lim)
	r.wireConnections(rl)
	r.wireNegentropy(rl)

	// The NIP-45 HyperLogLog offset of a COUNT (go-nostr's, except for
	// the filters that once crashed it) and the announcement of stored
	// events (the writer's, in commit order: ingest.go) are hooks of the
	// patched khatru (relay/internal/khatru/PATCHES.md, 15 and 16).
	rl.HyperLogLogOffset = policies.HyperLogLogOffset
	rl.StoreAnnounces = true
	rl.StoreEvent = append(rl.StoreEvent, r.store.save)
	rl.ReplaceEvent = append(rl.ReplaceEvent, r.store.replace)
	rl.DeleteEvent = append(rl.DeleteEvent, r.store.delete)
	restricted := r.cfg.restrictedKinds()
	rule := policies.Restricted{Kinds: restricted, Addressed: r.cfg.addressedKinds()}
	rl.QueryEvents = append(rl.QueryEvents, rule.Hide(r.store.query))
	rl.CountEvents = append(rl.CountEvents, r.store.count)
	rl.CountEventsHLL = append(rl.CountEventsHLL, r.store.countWithHLL)

	rl.RejectEvent = append(rl.RejectEvent, r.refused.counted(
		r.liveRate,      // policies.EventRateLimiter (reload.go)
		r.manage.reject, // the operator's lists (manage.go)
		r.liveSize,      // policies.RejectOversizedByKind
		r.liveFuture,    // policies.RejectFarFuture
		policies.RejectExpired(nostr.Now),
		policies.ValidateAgentEvents(),
		policies.RejectCommentRootMismatch(r),
		policies.RejectLessonOfNonDefinition(r),
		// Deleted events (khatru's own check is defect 4) are refused by the
		// writer, inside the write transaction (lmdbw deletedBy), so that a
		// deletion committed in the same batch counts too (NIP-09: a kind 5
		// naming the id, or the address at or after its created_at).
		policies.GuardCapabilities(r),
	)...)
	rl.RejectFilter = append(rl.RejectFilter, rule.RequireAuth())
	rl.RejectCountFilter = append(rl.RejectCountFilter, policies.RestrictCount(restricted))
	rl.PreventBroadcastTo = append(rl.PreventBroadcastTo, rule.PreventBroadcast())
	rl.OverwriteFilter = append(rl.OverwriteFilter, r.liveCapLimit) // policies.CapLimit
	rl.OnConnect = append(rl.OnConnect, r.trackConn)
	rl.OnDisconnect = append(rl.OnDisconnect, r.untrackConn)
	// OnStored and the live broadcast of stored events are done by the
	// store's writer, in commit order (announce): khatru's own
	// OnEventSaved and broadcast are skipped for them (ingest.go).
	rl.OnEphemeralEvent = append(rl.OnEphemeralEvent, r.fireEphemeral)
	r.routes(rl.Router())
}

// wireBudgets sets the per-connection budgets of the patched khatru
// (relay/internal/khatru/PATCHES.md) and the checks on whole requests.
func (r *Relay) wireBudgets(rl *khatru.Relay, lim Limits) {
	rl.WriteWait = lim.WriteTimeout
	rl.MaxOutboundBytes = lim.MaxOutboundBytes
	rl.MaxOutboundFrames = lim.MaxOutboundMessages
	rl.MaxConcurrentMessages = lim.MaxConcurrentMessages
	rl.MaxConcurrentQueries = lim.MaxConcurrentQueries
	rl.MaxSubscriptions = lim.MaxSubscriptions
	rl.RejectRequest = append(rl.RejectRequest, r.liveBudget) // policies.RequestBudget (reload.go)
	rl.OnSlowConsumer = append(rl.OnSlowConsumer, func(ws *khatru.WebSocket) {
		r.slowConsumers.Add(1)
		r.log.Warn("slow consumer cut off", "ip", policies.ClientIP(ws.Request, r.cfg.TrustedProxies),
			"max_outbound_bytes", lim.MaxOutboundBytes, "max_outbound_messages", lim.MaxOutboundMessages)
	})
}

// Stats are the relay's counters since Open.
type Stats struct {
	Connections   int           // open websocket connections
	Subscriptions int           // live subscription filters over all connections
	SlowConsumers int64         // connections cut off for not reading
	RefusedConns  int64         // websockets refused by MaxConnections or MaxConnectionsPerIP
	Shed          int64         // websockets and HTTP requests refused while busy (MemoryCeiling)
	Batches       int64         // write transactions committed (or failed) by the group-commit writer
	BatchOps      int64         // events, replacements and deletions in them
	CommitTime    time.Duration // time spent committing them (fsync included)
}

// Stats reports the relay's counters.
func (r *Relay) Stats() Stats {
	g := r.store.stats()
	return Stats{Connections: r.Connections(), Subscriptions: r.khatru.Relay.ListenerCount(),
		SlowConsumers: r.slowConsumers.Load(), RefusedConns: r.refusedConns.Load(), Shed: r.shed.Load(), Batches: g.batches, BatchOps: g.ops,
		CommitTime: time.Duration(g.commitNanos)}
}

// announce tells OnStored listeners and live subscribers about an event
// the writer has just committed; it runs on the writer's announcer
// goroutine, in commit order, before the publisher is answered.
func (r *Relay) announce(evt *nostr.Event) {
	r.log.Debug("event stored", "id", evt.ID, "kind", evt.Kind, "pubkey", evt.PubKey)
	r.stored.fire(evt)
	r.khatru.BroadcastEvent(evt)
}

// announceRemoteEphemeral tells OnEphemeral listeners and live subscribers
// about an ephemeral event another instance accepted (Postgres mode).
func (r *Relay) announceRemoteEphemeral(evt *nostr.Event) {
	r.ephemeral.fire(evt)
	r.khatru.BroadcastEvent(evt)
}

// ServeHTTP serves websockets (NIP-01), NIP-11 and the HTTP API.
func (r *Relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Header.Get("Upgrade") != "websocket" && req.Header.Get("Accept") == "application/nostr+json" {
		r.serveNIP11(w, req)
		return
	}
	if isNIP86(req) {
		r.serveNIP86(w, req) // nip86.go: never khatru's
		return
	}
	r.khatru.ServeHTTP(w, req)
}

func (r *Relay) trackConn(ctx context.Context) {
	if ws := khatru.GetConnection(ctx); ws != nil {
		r.connMu.Lock()
		r.conns[ws] = struct{}{}
		r.connMu.Unlock()
	}
}

func (r *Relay) untrackConn(ctx context.Context) {
	if ws := khatru.GetConnection(ctx); ws != nil {
		r.connMu.Lock()
		delete(r.conns, ws)
		r.connMu.Unlock()
	}
}

// Connections is the number of open websocket connections.
func (r *Relay) Connections() int {
	r.connMu.Lock()
	defer r.connMu.Unlock()
	return len(r.conns)
}

// closeGrace is how long a websocket client gets to answer the relay's
// close frame before its connection is closed anyway.
const closeGrace = 2 * time.Second

// Close says goodbye to every websocket client, closes the connections of
// those that have not gone after closeGrace (or when ctx ends, if sooner),
// drains in-flight storage work and closes the stores. Stop the
// http.Server first so that no new connection arrives.
func (r *Relay) Close(ctx context.Context) error {
	grace := closeGrace
	if dl, ok := ctx.Deadline(); ok {
		grace = min(grace, time.Until(dl)/2)
	}
	r.connMu.Lock()
	for ws := range r.conns {
		ws.Close(websocket.CloseGoingAway, "relay shutting down", grace)
	}
	r.connMu.Unlock()
	r.waitForDisconnects(ctx)
	r.khatru.Relay.Stop()
	err := r.store.close()
	r.log.Info("relay closed", "data", r.cfg.DataDir)
	return err
}

func (r *Relay) waitForDisconnects(ctx context.Context) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for r.Connections() > 0 {
		select {
		case <-ctx.Done():
			r.log.Warn("closing with clients still connected", "clients", r.Connections())
			return
		case <-tick.C:
		}
	}
}

// errorf builds a NIP-01 prefixed error.
func errorf(prefix, format string, args ...any) error {
	return fmt.Errorf(prefix+": "+format, args...)
}
