package nostrrpc

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"

	"github.com/agentnode/agentnode/agentd/strangers"
	"github.com/agentnode/agentnode/internal/inbox"
	"github.com/agentnode/agentnode/jsonrpc"
)

// EphemeralSource hands over the ephemeral events a relay accepts.
// *relay.Relay satisfies it. fn must not block.
type EphemeralSource interface {
	OnEphemeral(fn func(*nostr.Event)) (remove func())
}

// Handler serves the JSON-RPC methods of the node's local agents. agent
// is the addressed local agent's pubkey, from the verified caller's (both
// hex). The result is marshalled to JSON. Return an error wrapping
// ErrMethodNotFound for an unknown method, a *capabilities.Error for a
// coded failure, or a *jsonrpc.Error to choose the JSON-RPC error yourself.
// ServeRPC is called concurrently, once per request (a batch's entries
// one after another).
type Handler interface {
	ServeRPC(ctx context.Context, agent, from, method string, params json.RawMessage) (any, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, agent, from, method string, params json.RawMessage) (any, error)

// ServeRPC calls f.
func (f HandlerFunc) ServeRPC(ctx context.Context, agent, from, method string, params json.RawMessage) (any, error) {
	return f(ctx, agent, from, method, params)
}

// ServerConfig wires a Server.
type ServerConfig struct {
	Source  EphemeralSource                                   // where requests arrive (the node's relay)
	Publish func(ctx context.Context, evt *nostr.Event) error // where replies go (the node's relay)
	// Keys returns a local agent's secret key (hex); ok is false for a
	// pubkey that is not a local agent (requests to it are ignored).
	Keys    func(ctx context.Context, pubkey string) (sk string, ok bool)
	Handler Handler
	Logger  *slog.Logger
	// Workers is how many requests are served at once (default 4); Queue
	// how many wait (default 256; more are dropped and logged).
	Workers, Queue int
	// Timeout bounds one message's handler calls, a batch's together
	// (default 30s).
	Timeout time.Duration
	// MaxAge: requests created longer ago than this are ignored (default
	// 5m), so replays older than the replay memory go unanswered too.
	MaxAge time.Duration
	// Gate admits each request before the Handler runs (the strangers'
	// budget: *strangers.Gate); a caller it refuses gets a CodeRateLimited
	// error and costs no handler call. nil: every caller is admitted.
	Gate Gate
	// RPC bounds what one request may be and answer (its MaxRequestBytes,
	// MaxBatch, MaxResponseBytes): the same rules as the node's HTTP and
	// websocket JSON-RPC. MaxResponseBytes is at most what NIP-44 encrypts
	// (65,535 bytes, also the default): a larger answer is replaced by a
	// -32600 error. Its MapError, Fallback and Logger are this server's own.
	RPC jsonrpc.Options
}

// Gate decides what a caller's request may cost (agentd/strangers).
type Gate interface {
	Admit(ctx context.Context, agent, from string) strangers.Verdict
}

// Refusals of strangers' requests.
var (
	// errOverBudget: past the strangers' budget.
	errOverBudget = &jsonrpc.Error{Code: CodeRateLimited,
		Message: "rate-limited: this agent answers callers it does not know only a few times in a while; try again later"}
	// errStrangersBusy: every worker strangers may take is busy.
	errStrangersBusy = &jsonrpc.Error{Code: CodeRateLimited,
		Message: "rate-limited: this agent is busy with other callers it does not know; try again later"}
)

// Server answers kind-25910 requests addressed to local agents.
type Server struct {
	cfg   ServerConfig
	log   *slog.Logger
	rpc   *jsonrpc.Server // validation, batches, limits, panics: as over HTTP
	seen  *seen
	queue chan request
	// strangers holds a token per request of a stranger being served:
	// they take all the workers but one, which stays for known callers.
	strangers chan struct{}
	ready     chan struct{} // closed once Run subscribed
	subbed    sync.Once
}

// NewServer returns a Server for cfg. It starts nothing.
func NewServer(cfg ServerConfig) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 256
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = 5 * time.Minute
	}
	s := &Server{cfg: cfg, log: cfg.Logger, seen: newSeen(4096), queue: make(chan request, cfg.Queue),
		strangers: make(chan struct{}, max(1, cfg.Workers-1)), ready: make(chan struct{})}
	opts := cfg.RPC
	opts.MapError, opts.Fallback, opts.Logger = mapError, s.dispatch, cfg.Logger
	if opts.MaxResponseBytes <= 0 || opts.MaxResponseBytes > nip44.MaxPlaintextSize {
		opts.MaxResponseBytes = nip44.MaxPlaintextSize // what NIP-44 can carry: a larger answer is a -32600, not silence
	}
	s.rpc = jsonrpc.NewServer(opts)
	return s
}

// Run answers requests until ctx ends: it subscribes to the source, runs
// the workers and returns nil once they have stopped (requests in
// progress are cut short through their context).
func (s *Server) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	inbox.Work(ctx, &wg, s.cfg.Workers, s.queue, s.serve)
	remove := s.cfg.Source.OnEphemeral(s.offer)
	s.subbed.Do(func() { close(s.ready) })
	<-ctx.Done()
	remove()
	wg.Wait()
	return nil
}

// Ready is closed once Run has subscribed to the source: requests stored
// from then on are answered.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// request is a request event and where its reply goes.
type request struct {
	evt     *nostr.Event
	publish func(context.Context, *nostr.Event) error
}

// offer queues a kind-25910 event of the source without blocking the relay.
func (s *Server) offer(evt *nostr.Event) { s.Offer(evt, s.cfg.Publish) }

// Offer queues a kind-25910 event that arrived elsewhere than the Source
// (a peer relay: PeerListener) without blocking; its reply goes out
// through publish. Requests share one replay memory whatever their
// source, so one published to several relays is served once. Events that
// are not requests are ignored. Safe for concurrent use.
func (s *Server) Offer(evt *nostr.Event, publish func(context.Context, *nostr.Event) error) {
	if evt.Kind != Kind || evt.Tags.Find("e") != nil { // replies carry an e tag
		return
	}
	select {
	case s.queue <- request{evt, publish}:
	default:
		s.log.Warn("nostrrpc: request queue full, request dropped", "id", evt.ID, "from", evt.PubKey)
	}
}

// serve answers one request event, if it is addressed to a local agent.
func (s *Server) serve(ctx context.Context, r request) {
	evt := r.evt
	agent, sk, ok := inbox.Addressee(ctx, evt, s.cfg.Keys)
	if !ok || !s.fresh(evt) || !signed(evt) {
		return
	}
	plain, err := open(evt, sk)
	if err != nil || isResponse(plain) {
		s.log.Debug("nostrrpc: ignoring event", "id", evt.ID, "err", err)
		return
	}
	if s.replayed(evt, agent) {
		return
	}
	if out := s.handle(ctx, agent, evt.PubKey, plain); out != nil {
		s.reply(ctx, r, agent, sk, json.RawMessage(out))
	}
}

// handle dispatches one decrypted message (a request or a batch) through
// the jsonrpc server, all of it within Timeout: a batch of slow calls
// holds a worker no longer than one.
func (s *Server) handle(ctx context.Context, agent, from string, plain []byte) []byte {
	ctx, cancel := context.WithTimeout(withCaller(ctx, agent, from), s.cfg.Timeout)
	defer cancel()
	return s.rpc.Handle(ctx, plain)
}

func (s *Server) fresh(evt *nostr.Event) bool {
	age := time.Since(evt.CreatedAt.Time())
	return age <= s.cfg.MaxAge && age >= -s.cfg.MaxAge // a future date would outlive the replay memory
}

// signed reports whether evt's id and signature are its own.
func signed(evt *nostr.Event) bool {
	ok, err := evt.CheckSignature()
	return ok && err == nil && evt.CheckID()
}

// replayed records the request event and reports whether it was seen
// before (the same event: delivered by two relays, or replayed), logging
// the duplicate. The JSON-RPC id is no key: every caller's MCP session
// numbers its requests from 0, and a new event with an old id is a new
// request (issue 22).
func (s *Server) replayed(evt *nostr.Event, agent string) bool {
	if !s.seen.add("evt:" + evt.ID) {
		return false
	}
	s.log.Info("nostrrpc: duplicate request dropped", "id", evt.ID, "from", evt.PubKey, "agent", agent)
	return true
}

// caller is who sent a request and to which local agent.
type caller struct{ agent, from string }

type callerKey struct{}

func withCaller(ctx context.Context, agent, from string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller{agent, from})
}

// dispatch runs one request of a message (jsonrpc.Options.Fallback): it
// asks the Gate whether from's request to agent may run and runs it, a
// known caller's at once, a stranger's within the budget if a stranger's
// worker slot is free; otherwise it is refused.
func (s *Server) dispatch(ctx context.Context, method string, params json.RawMessage) (any, error) {
	c, _ := ctx.Value(callerKey{}).(caller)
	v := strangers.Known
	if s.cfg.Gate != nil {
		v = s.cfg.Gate.Admit(ctx, c.agent, c.from)
	}
	switch v {
	case strangers.Known:
		return s.cfg.Handler.ServeRPC(ctx, c.agent, c.from, method, params)
	case strangers.Allow:
		select {
		case s.strangers <- struct{}{}:
			defer func() { <-s.strangers }()
			return s.cfg.Handler.ServeRPC(ctx, c.agent, c.from, method, params)
		default:
			s.log.Debug("nostrrpc: stranger refused, its workers are busy", "agent", c.agent, "from", c.from)
			return nil, errStrangersBusy
		}
	}
	s.log.Debug("nostrrpc: caller over the strangers' budget", "agent", c.agent, "from", c.from, "verdict", v)
	return nil, errOverBudget
}

// reply publishes resp to the caller of req.
func (s *Server) reply(ctx context.Context, r request, agent, sk string, resp json.RawMessage) {
	req := r.evt
	tags := nostr.Tags{{"p", req.PubKey}, {"e", req.ID}}
	evt, err := newEvent(resp, sk, req.PubKey, tags)
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		err = r.publish(ctx, evt)
	}
	if err != nil {
		s.log.Warn("nostrrpc: reply not sent", "agent", agent, "to", req.PubKey, "request", req.ID, "err", err)
	}
}
