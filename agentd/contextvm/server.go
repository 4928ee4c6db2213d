package contextvm

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agentnode/agentnode/agentd/strangers"
	"github.com/agentnode/agentnode/internal/inbox"
	ourrpc "github.com/agentnode/agentnode/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"
)

// ServerConfig wires a Server.
type ServerConfig struct {
	// Keys returns a local agent's secret key (hex); ok is false for a
	// pubkey that is not a local agent (messages to it are ignored).
	Keys func(ctx context.Context, pubkey string) (sk string, ok bool)
	// Build returns the MCP server of a new session of agent with client
	// (mcpserver.AgentServer: the same surface as /mcp/agents/{agent}).
	Build func(ctx context.Context, agent, client string) (*mcp.Server, error)
	// Authorize decides whether client may use agent (nil: anyone). It is
	// asked before every request; a refusal is answered with a JSON-RPC
	// error (CodeForbidden) and runs nothing.
	Authorize func(ctx context.Context, agent, client string) error
	// Gate admits each tools/call before it runs (the strangers' budget:
	// strangers.Gate; nil admits all). A caller it refuses, or a stranger
	// while StrangerSlots of strangers' calls run, is answered
	// CodeRateLimited. Listing, initialize and ping cost no token: they
	// are bounded by the session cap and the relay's rate limits.
	Gate Gate
	// StrangerSlots bounds the strangers' tools/calls running at once
	// (default DefaultStrangerSlots).
	StrangerSlots int
	// Publish sends a reply (the node's relay).
	Publish func(ctx context.Context, evt *nostr.Event) error
	// Encryption is the server's policy (default optional).
	Encryption Encryption
	// MaxSessions caps the live (agent, client) sessions (default
	// DefaultMaxSessions); one more evicts the least recently used, which
	// its client then continues without initialize (a stateless session).
	MaxSessions int
	// SessionIdle closes a session with no message for this long
	// (default DefaultSessionIdle).
	SessionIdle time.Duration
	// MaxAge: messages created longer ago (or further ahead) than this
	// are ignored (default DefaultMaxAge); the replay memory spans twice it.
	MaxAge time.Duration
	// Workers is how many events are opened at once (default 4); Queue
	// how many wait (default 256; more are dropped and logged).
	Workers, Queue int
	// InFlight bounds a session's requests waiting for its server
	// (default 32); one more is answered "rate-limited:".
	InFlight int
	Logger   *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Defaults of ServerConfig.
const (
	DefaultMaxSessions   = 1000
	DefaultSessionIdle   = 30 * time.Minute
	DefaultMaxAge        = 5 * time.Minute
	DefaultReplayIDs     = 1 << 16
	DefaultStrangerSlots = 3
)

// Gate decides what a caller's request may cost (agentd/strangers).
type Gate interface {
	Admit(ctx context.Context, agent, from string) strangers.Verdict
}

// JSON-RPC error codes the server answers with besides the MCP ones.
const (
	CodeForbidden   = -32003 // Authorize refused the client
	CodeRateLimited = -32029 // over the strangers' budget, or too many requests in flight (as agentd/nostrrpc)
	CodeEncryption  = -32006 // a plaintext request to a server requiring encryption
)

// Codes is the table of error codes a ContextVM server answers besides the
// standard ones (jsonrpc.StandardCodes): MCP's own, answered by the MCP
// server of a session (go-sdk), and this server's refusals.
var Codes = []ourrpc.CodeDoc{
	{Code: mcp.CodeResourceNotFound, Name: "resource not found", Meaning: "MCP: resources/read of an unknown URI"},
	{Code: mcp.CodeURLElicitationRequired, Name: "URL elicitation required", Meaning: "MCP: the client must complete a URL elicitation first"},
	{Code: CodeForbidden, Name: "forbidden", Meaning: "this agent serves only the callers its owner allows"},
	{Code: CodeEncryption, Name: "encryption required", Meaning: "a plaintext request to a server that requires gift wraps"},
	{Code: CodeRateLimited, Name: "rate-limited", Meaning: "over the strangers' budget, or too many requests in flight in the session"},
}

// Server answers ContextVM messages addressed to local agents: each
// (agent, client pubkey) pair is one MCP session of the agent's server.
type Server struct {
	cfg  ServerConfig
	log  *slog.Logger
	seen *seen

	queue chan *nostr.Event
	slots chan struct{} // one per stranger's call running
	ready chan struct{}
	once  sync.Once

	mu       sync.Mutex
	runCtx   context.Context // set by Run
	sessions map[sessionKey]*session
	wg       sync.WaitGroup // the sessions' waiters
}

// NewServer returns a Server for cfg. It starts nothing.
func NewServer(cfg ServerConfig) *Server {
	cfg = serverDefaults(cfg)
	return &Server{cfg: cfg, log: cfg.Logger, seen: newSeen(2*cfg.MaxAge, DefaultReplayIDs, cfg.Now),
		queue: make(chan *nostr.Event, cfg.Queue), slots: make(chan struct{}, cfg.StrangerSlots), ready: make(chan struct{}), sessions: map[sessionKey]*session{}}
}

func serverDefaults(cfg ServerConfig) ServerConfig {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.MaxSessions, DefaultMaxSessions)
	def(&cfg.Workers, 4)
	def(&cfg.Queue, 256)
	def(&cfg.InFlight, 32)
	def(&cfg.StrangerSlots, DefaultStrangerSlots)
	if cfg.SessionIdle <= 0 {
		cfg.SessionIdle = DefaultSessionIdle
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return cfg
}

// Ready is closed once Run has started: events offered from then on are served.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Offer queues an event (a kind 25910, 1059 or 21059 the relay accepted)
// without blocking; those not addressed to a local agent, or not
// ContextVM, are ignored later. Safe for concurrent use.
func (s *Server) Offer(evt *nostr.Event) {
	if evt.Kind != KindMessage && !isWrap(evt.Kind) {
		return
	}
	select {
	case s.queue <- evt:
	default:
		s.log.Warn("contextvm: queue full, message dropped", "id", evt.ID, "kind", evt.Kind)
	}
}

// Run serves until ctx ends, then closes every session and waits for them.
func (s *Server) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.runCtx = ctx
	s.mu.Unlock()
	var wg sync.WaitGroup
	inbox.Work(ctx, &wg, s.cfg.Workers, s.queue, s.serve)
	wg.Go(func() { s.reap(ctx) })
	s.once.Do(func() { close(s.ready) })
	<-ctx.Done()
	wg.Wait()
	s.closeAll()
	s.wg.Wait()
	return nil
}

// serve handles one event addressed to a local agent.
func (s *Server) serve(ctx context.Context, evt *nostr.Event) {
	agent, sk, ok := inbox.Addressee(ctx, evt, s.cfg.Keys)
	if !ok || s.cfg.Encryption == EncryptionDisabled && isWrap(evt.Kind) {
		return
	}
	env, err := Open(evt, sk)
	if err != nil {
		s.log.Debug("contextvm: ignoring event", "id", evt.ID, "kind", evt.Kind, "err", err)
		return
	}
	if !s.fresh(env.Event) || env.Event.PubKey == agent || !s.firstTime(env, evt) {
		return
	}
	s.dispatch(ctx, agent, sk, env)
}

func (s *Server) fresh(evt *nostr.Event) bool {
	age := s.cfg.Now().Sub(evt.CreatedAt.Time())
	return age <= s.cfg.MaxAge && age >= -s.cfg.MaxAge
}

// firstTime records a gift wrap and reports whether it is new; a
// duplicate is logged. The same wrap delivered twice (by two relays, or
// replayed) is served once. A 25910's own id, plaintext or unwrapped, is
// remembered per session (session.fresh): one client's new session may
// send byte-identical messages (the same initialize, the same first
// request with id 1) within the same second, and is served.
func (s *Server) firstTime(env *Envelope, outer *nostr.Event) bool {
	if !isWrap(outer.Kind) || !s.seen.add(outer.ID) {
		return true
	}
	s.log.Info("contextvm: duplicate message dropped", "id", outer.ID, "kind", outer.Kind, "from", env.Event.PubKey)
	return false
}

// dispatch hands a message to its session, after the access and
// encryption checks.
func (s *Server) dispatch(ctx context.Context, agent, sk string, env *Envelope) {
	client := env.Event.PubKey
	req, isReq := env.Message.(*jsonrpc.Request)
	if s.cfg.Encryption == EncryptionRequired && !env.Encrypted() {
		s.refuse(ctx, agent, sk, env, CodeEncryption, "encryption required: send this request gift-wrapped (kind 1059 or 21059)")
		return
	}
	if s.cfg.Authorize != nil {
		if err := s.cfg.Authorize(ctx, agent, client); err != nil {
			s.refuse(ctx, agent, sk, env, CodeForbidden, "forbidden: this agent serves only the callers its owner allows")
			return
		}
	}
	sess, err := s.session(ctx, agent, sk, client, env)
	if errors.Is(err, errNoSession) {
		s.log.Debug("contextvm: no session for a notification or response", "agent", agent, "client", client)
		return
	}
	if err != nil {
		s.log.Warn("contextvm: no session", "agent", agent, "client", client, "err", err)
		if isReq && req.IsCall() {
			s.refuse(ctx, agent, sk, env, jsonrpc.CodeInternalError, "internal error: the agent's server is unavailable")
		}
		return
	}
	if !sess.fresh(env.Event.ID) {
		s.log.Info("contextvm: duplicate message dropped", "id", env.Event.ID, "kind", KindMessage, "from", client, "rewrapped", true)
		return
	}
	stranger, msg := s.admit(ctx, agent, client, req)
	if msg != "" {
		s.refuse(ctx, agent, sk, env, CodeRateLimited, msg)
		return
	}
	if err := sess.deliver(env, stranger); errors.Is(err, errBusy) {
		s.refuse(ctx, agent, sk, env, CodeRateLimited, "rate-limited: too many requests in flight in this session")
	}
}

// admit asks the Gate whether a tools/call may run: stranger is true
// when it took a stranger's slot (released with its response); msg is
// the refusal, if any.
func (s *Server) admit(ctx context.Context, agent, client string, req *jsonrpc.Request) (stranger bool, msg string) {
	if req == nil || !req.IsCall() || req.Method != "tools/call" || s.cfg.Gate == nil {
		return false, ""
	}
	switch v := s.cfg.Gate.Admit(ctx, agent, client); v {
	case strangers.Known:
		return false, ""
	case strangers.Allow:
		select {
		case s.slots <- struct{}{}:
			return true, ""
		default:
			s.log.Debug("contextvm: stranger refused, its slots are busy", "agent", agent, "from", client)
			return false, "rate-limited: this agent is busy with other callers it does not know; try again later"
		}
	default:
		s.log.Debug("contextvm: caller over the strangers' budget", "agent", agent, "from", client, "verdict", v)
		return false, "rate-limited: this agent answers callers it does not know only a few times in a while; try again later"
	}
}

// release frees a stranger's slot.
func (s *Server) release() { <-s.slots }

// refuse answers a request with a JSON-RPC error, wrapped as it came.
func (s *Server) refuse(ctx context.Context, agent, sk string, env *Envelope, code int64, msg string) {
	req, ok := env.Message.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return
	}
	resp := &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: code, Message: msg}}
	tags := nostr.Tags{{"p", env.Event.PubKey}, {"e", env.Event.ID}}
	if err := s.send(ctx, sk, env.Event.PubKey, resp, tags, env.WrapKind); err != nil {
		s.log.Warn("contextvm: refusal not sent", "agent", agent, "to", env.Event.PubKey, "err", err)
	}
}

// send signs msg as sk with tags, wraps it if wrapKind is set and
// publishes it.
func (s *Server) send(ctx context.Context, sk, to string, msg jsonrpc.Message, tags nostr.Tags, wrapKind int) error {
	inner, err := NewMessage(msg, sk, tags)
	if err != nil {
		return err
	}
	evt, err := Seal(inner, to, wrapKind)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return s.cfg.Publish(ctx, evt)
}

// reap closes idle sessions until ctx ends.
func (s *Server) reap(ctx context.Context) {
	every := max(s.cfg.SessionIdle/4, 10*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.closeIdle()
		}
	}
}

// Sessions is the number of live sessions (for tests and metrics).
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}
