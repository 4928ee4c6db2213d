package khatru

import (
	"context"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip11"
	"github.com/nbd-wtf/go-nostr/nip45/hyperloglog"
)

func NewRelay() *Relay {
	ctx := context.Background()

	rl := &Relay{
		Log: log.New(os.Stderr, "[khatru-relay] ", log.LstdFlags),

		Info: &nip11.RelayInformationDocument{
			Software:      "https://github.com/fiatjaf/khatru",
			Version:       "n/a",
			SupportedNIPs: []any{1, 11, 40, 42, 70, 86},
		},

		// PATCH (agentnode): the connection's own write buffer is never
		// used (the outbox writes whole frames to the socket), so it comes
		// from a pool that is never drawn from instead of 1 KiB per
		// connection.
		upgrader: websocket.Upgrader{
			ReadBufferSize:  1024,
			WriteBufferSize: 1024,
			WriteBufferPool: &sync.Pool{},
			CheckOrigin:     func(r *http.Request) bool { return true },
		},

		clients:   make(map[*WebSocket][]listenerSpec, 100),
		listeners: make([]listener, 0, 100),

		serveMux: &http.ServeMux{},

		WriteWait:      10 * time.Second,
		PongWait:       60 * time.Second,
		PingPeriod:     30 * time.Second,
		MaxMessageSize: 512000,

		MaxOutboundBytes:      4 << 20,
		MaxOutboundFrames:     20000,
		MaxConcurrentMessages: 64,
		MaxConcurrentQueries:  4,
		MaxSubscriptions:      200,
	}

	// PATCH (agentnode): the expiration manager's goroutine stops with
	// Stop (upstream ran it on context.Background() for ever).
	ctx, rl.stopBackground = context.WithCancel(ctx)
	rl.expirationManager = newExpirationManager(rl)
	go rl.expirationManager.start(ctx)

	return rl
}

type Relay struct {
	// setting this variable overwrites the hackish workaround we do to try to figure out our own base URL
	ServiceURL string

	// hooks that will be called at various times
	RejectEvent               []func(ctx context.Context, event *nostr.Event) (reject bool, msg string)
	OverwriteDeletionOutcome  []func(ctx context.Context, target *nostr.Event, deletion *nostr.Event) (acceptDeletion bool, msg string)
	StoreEvent                []func(ctx context.Context, event *nostr.Event) error
	ReplaceEvent              []func(ctx context.Context, event *nostr.Event) error
	DeleteEvent               []func(ctx context.Context, event *nostr.Event) error
	OnEventSaved              []func(ctx context.Context, event *nostr.Event)
	OnEphemeralEvent          []func(ctx context.Context, event *nostr.Event)
	RejectFilter              []func(ctx context.Context, filter nostr.Filter) (reject bool, msg string)
	RejectCountFilter         []func(ctx context.Context, filter nostr.Filter) (reject bool, msg string)
	OverwriteFilter           []func(ctx context.Context, filter *nostr.Filter)
	QueryEvents               []func(ctx context.Context, filter nostr.Filter) (chan *nostr.Event, error)
	CountEvents               []func(ctx context.Context, filter nostr.Filter) (int64, error)
	CountEventsHLL            []func(ctx context.Context, filter nostr.Filter, offset int) (int64, *hyperloglog.HyperLogLog, error)
	RejectConnection          []func(r *http.Request) bool
	OnConnect                 []func(ctx context.Context)
	OnDisconnect              []func(ctx context.Context)
	OverwriteRelayInformation []func(ctx context.Context, r *http.Request, info nip11.RelayInformationDocument) nip11.RelayInformationDocument
	OverwriteResponseEvent    []func(ctx context.Context, event *nostr.Event)
	PreventBroadcast          []func(ws *WebSocket, event *nostr.Event) bool
	// PATCH (agentnode): PreventBroadcastTo also sees the filter of the
	// subscription the event matched (PATCHES.md, 14).
	PreventBroadcastTo []func(ws *WebSocket, filter nostr.Filter, event *nostr.Event) bool
	// PATCH (agentnode): StoreAnnounces says that the StoreEvent and
	// ReplaceEvent hooks announce every event they accept themselves
	// (PATCHES.md, 15): khatru then runs no OnEventSaved, tracks no NIP-40
	// expiration and broadcasts nothing for such an event, and AddEvent
	// reports skipBroadcast.
	StoreAnnounces bool
	// PATCH (agentnode): HyperLogLogOffset picks the NIP-45 HyperLogLog
	// offset of a COUNT filter, -1 for none (PATCHES.md, 16); nil is
	// go-nostr's nip45.HyperLogLogEventPubkeyOffsetForFilter.
	HyperLogLogOffset func(filter nostr.Filter) int

	// these are used when this relays acts as a router
	routes                []Route
	getSubRelayFromEvent  func(*nostr.Event) *Relay // used for handling EVENTs
	getSubRelayFromFilter func(nostr.Filter) *Relay // used for handling REQs

	// setting up handlers here will enable these methods
	ManagementAPI RelayManagementAPI

	// editing info will affect the NIP-11 responses
	Info *nip11.RelayInformationDocument

	// Default logger, as set by NewServer, is a stdlib logger prefixed with "[khatru-relay] ",
	// outputting to stderr.
	Log *log.Logger

	// for establishing websockets
	upgrader websocket.Upgrader

	// keep a connection reference to all connected clients for Server.Shutdown
	// also used for keeping track of who is listening to what
	clients      map[*WebSocket][]listenerSpec
	listeners    []listener
	clientsMutex sync.RWMutex // PATCH (agentnode): read-locked by notifyListeners

	// set this to true to support negentropy
	Negentropy bool
	// PATCH (agentnode): NIP-77 bounds and item source (negentropy.go).
	NegentropyLimits NegentropyLimits
	NegentropyItems  func(ctx context.Context, filter nostr.Filter, max int, add func(nostr.Timestamp, string)) error
	negBook          negentropyBook

	// in case you call Server.Start
	Addr       string
	serveMux   *http.ServeMux
	httpServer *http.Server

	// websocket options
	WriteWait      time.Duration // Time allowed to write a message to the peer.
	PongWait       time.Duration // Time allowed to read the next pong message from the peer.
	PingPeriod     time.Duration // Send pings to peer with this period. Must be less than pongWait.
	MaxMessageSize int64         // Maximum message size allowed from peer.

	// PATCH (agentnode): per-connection budgets (PATCHES.md). Zero means
	// no bound for the outbound queue and subscriptions; the concurrency
	// bounds are at least 1.
	MaxOutboundBytes      int // bytes queued for a client before it is cut off as a slow consumer
	MaxOutboundFrames     int // messages queued for a client before it is cut off
	MaxConcurrentMessages int // messages of one connection handled at once; the reader waits beyond
	MaxConcurrentQueries  int // REQ/COUNT queries of one connection run at once; the others wait
	MaxSubscriptions      int // open subscriptions per connection; a REQ beyond gets CLOSED

	// PATCH (agentnode): OnSlowConsumer is called (on the sender's
	// goroutine: keep it short) when a connection goes over its outbound
	// budget; RejectRequest sees every REQ and COUNT whole, before any of
	// its filters is queried or subscribed, limit:0 filters included.
	OnSlowConsumer []func(ws *WebSocket)
	RejectRequest  []func(ctx context.Context, filters nostr.Filters) (reject bool, msg string)

	// PATCH (agentnode): OnPublishDone is called once an EVENT that passed
	// the id and signature checks got its OK (ok as sent), with the time
	// from its handling to the OK being queued; OnEOSE once a REQ's EOSE is
	// queued, with the time since its filters passed. Both run on the
	// handler's goroutine: keep them short.
	OnPublishDone []func(ok bool, d time.Duration)
	OnEOSE        []func(d time.Duration)

	// PATCH (agentnode): AdmitConnection, when set, is asked before every
	// websocket upgrade. A non-zero status refuses the connection with
	// that HTTP status and reason (plain text); otherwise release is
	// called exactly once, when the connection ends or its upgrade fails.
	AdmitConnection func(r *http.Request) (release func(), status int, reason string)

	// NIP-40 expiration manager
	expirationManager *expirationManager
	stopBackground    context.CancelFunc
}

// Stop ends the relay's background goroutine (the NIP-40 expiration
// manager). PATCH (agentnode).
func (rl *Relay) Stop() { rl.stopBackground() }

func (rl *Relay) getBaseURL(r *http.Request) string {
	if rl.ServiceURL != "" {
		return rl.ServiceURL
	}

	host := r.Header.Get("X-Forwarded-Host")
	if host == "" {
		host = r.Host
	}
	proto := r.Header.Get("X-Forwarded-Proto")
	if proto == "" {
		if host == "localhost" {
			proto = "http"
		} else if strings.Contains(host, ":") {
			// has a port number
			proto = "http"
		} else if _, err := strconv.Atoi(strings.ReplaceAll(host, ".", "")); err == nil {
			// it's a naked IP
			proto = "http"
		} else {
			proto = "https"
		}
	}
	return proto + "://" + host
}
