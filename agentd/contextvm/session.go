package contextvm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/agentnode/agentnode/agentd/requester"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"
)

// statelessProtocol is the MCP version a session that starts without
// initialize is taken to speak (a stateless ContextVM client, or one whose
// session was evicted or closed when idle).
const statelessProtocol = "2025-06-18"

var (
	errBusy      = errors.New("contextvm: too many requests in flight")
	errClosed    = errors.New("contextvm: session closed")
	errNoSession = errors.New("contextvm: no session to deliver to")
)

// sessionKey names a session: one per (agent, client pubkey).
type sessionKey struct{ agent, client string }

// session is one client's MCP session with one agent, and the
// mcp.Connection its server reads and writes. Requests' JSON-RPC ids are
// replaced by their event ids on the way in and restored on the way out,
// so a client that reuses ids (each new MCP client counts from 0) never
// collides with itself, and every reply e-tags its request.
type session struct {
	srv  *Server
	key  sessionKey
	sk   string
	in   chan jsonrpc.Message
	seen *seen // the 25910 ids served in this session
	done chan struct{}
	once sync.Once

	mu      sync.Mutex
	pending map[string]pendingCall // request event id -> the call
	wrap    int                    // how the latest message came (server-initiated ones go so)
	tagged  bool                   // discovery tags sent
	last    time.Time
}

// pendingCall is a request being served: its own id and how it came.
type pendingCall struct {
	id       jsonrpc.ID
	wrap     int
	stranger bool // holds a stranger's slot until answered
}

var _ mcp.Connection = (*session)(nil)

func newSession(srv *Server, key sessionKey, sk string) *session {
	return &session{srv: srv, key: key, sk: sk, in: make(chan jsonrpc.Message, srv.cfg.InFlight),
		seen: newSeen(2*srv.cfg.MaxAge, sessionReplayIDs, srv.cfg.Now),
		done: make(chan struct{}), pending: map[string]pendingCall{}, last: srv.cfg.Now()}
}

// transport hands an existing session to mcp.Server.Connect.
type transport struct{ s *session }

func (t transport) Connect(context.Context) (mcp.Connection, error) { return t.s, nil }

// session returns the session a message goes to, opening one for a
// request when there is none, and a new one for every initialize.
func (s *Server) session(ctx context.Context, agent, sk, client string, env *Envelope) (*session, error) {
	key := sessionKey{agent, client}
	req, isReq := env.Message.(*jsonrpc.Request)
	init := isReq && req.Method == "initialize"
	s.mu.Lock()
	old, runCtx := s.sessions[key], s.runCtx
	s.mu.Unlock()
	switch {
	case old != nil && !init:
		return old, nil
	case !isReq || !req.IsCall(): // only a request opens a session
		return nil, errNoSession
	case old != nil:
		old.Close() // a new initialize: the client starts over
	}
	return s.open(ctx, runCtx, key, sk, init)
}

// open builds and connects a new session's server and records it,
// evicting the least recently used session when MaxSessions are live.
func (s *Server) open(ctx, runCtx context.Context, key sessionKey, sk string, init bool) (*session, error) {
	srv, err := s.cfg.Build(ctx, key.agent, key.client)
	if err != nil {
		return nil, err
	}
	srv.AddReceivingMiddleware(asRequester(key.client))
	sess := newSession(s, key, sk)
	opts := &mcp.ServerSessionOptions{}
	if !init {
		opts.State = &mcp.ServerSessionState{InitializeParams: &mcp.InitializeParams{ProtocolVersion: statelessProtocol},
			InitializedParams: &mcp.InitializedParams{}, LogLevel: "info"}
	}
	ss, err := srv.Connect(runCtx, transport{sess}, opts)
	if err != nil {
		return nil, fmt.Errorf("contextvm: connect: %w", err)
	}
	s.wg.Go(func() {
		ss.Wait()
		s.forget(sess)
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.sessions[key]; prev != nil { // opened meanwhile by another worker
		prev.Close()
	}
	for len(s.sessions) >= s.cfg.MaxSessions {
		s.evictLRU()
	}
	s.sessions[key] = sess
	return sess, nil
}

// asRequester runs every request of a session as its client
// (agentd/requester): the agent's tools reach its state with the rights
// its owner opened to that pubkey, as over every other transport.
func asRequester(client string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			return next(requester.With(ctx, client), method, req)
		}
	}
}

// evictLRU closes the least recently used session. s.mu is held.
func (s *Server) evictLRU() {
	var oldest *session
	for _, sess := range s.sessions {
		if oldest == nil || sess.lastUsed().Before(oldest.lastUsed()) {
			oldest = sess
		}
	}
	delete(s.sessions, oldest.key)
	oldest.Close()
	s.log.Info("contextvm: session evicted (MaxSessions)", "agent", oldest.key.agent, "client", oldest.key.client)
}

// forget drops sess from the table once its server has stopped.
func (s *Server) forget(sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[sess.key] == sess {
		delete(s.sessions, sess.key)
	}
}

// closeIdle closes the sessions idle for longer than SessionIdle.
func (s *Server) closeIdle() {
	cutoff := s.cfg.Now().Add(-s.cfg.SessionIdle)
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, sess := range s.sessions {
		if sess.lastUsed().Before(cutoff) {
			delete(s.sessions, key)
			sess.Close()
		}
	}
}

// closeAll closes every session (Run's end).
func (s *Server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, sess := range s.sessions {
		delete(s.sessions, key)
		sess.Close()
	}
}

// sessionReplayIDs bounds a session's replay memory.
const sessionReplayIDs = 4096

// fresh records a 25910 id and reports whether the session has not seen
// it: a plaintext message delivered twice, or one taken out of one gift
// wrap and put in another, is served once. A new session (initialize)
// starts a new memory: two sessions of one client may send identical
// messages in the same second. (So a captured plaintext initialize
// replayed within MaxAge starts a session in which the captured requests
// run again: encrypted sessions are not exposed, their wraps being
// remembered node-wide.)
func (c *session) fresh(id string) bool { return !c.seen.add(id) }

// deliver queues a message for the session's server; a request's id
// becomes its event id. errBusy when InFlight calls are pending.
func (c *session) deliver(env *Envelope, stranger bool) error {
	msg := env.Message
	c.mu.Lock()
	c.last, c.wrap = c.srv.cfg.Now(), env.WrapKind
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if len(c.pending) >= c.srv.cfg.InFlight {
			c.mu.Unlock()
			if stranger {
				c.srv.release()
			}
			return errBusy
		}
		id, _ := jsonrpc.MakeID(env.Event.ID)
		c.pending[env.Event.ID] = pendingCall{id: req.ID, wrap: env.WrapKind, stranger: stranger}
		msg = &jsonrpc.Request{ID: id, Method: req.Method, Params: req.Params}
	}
	c.mu.Unlock()
	select {
	case c.in <- msg:
		return nil
	case <-c.done:
		return errClosed
	}
}

// Read returns the next message for the server.
func (c *session) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.in:
		return msg, nil
	case <-c.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write publishes a message of the server to the client: a response
// gets its request's id back, e-tags the request and goes as the request
// came (plaintext or wrapped the same way). A publish that fails is
// logged, not returned: the SDK would close the session for it.
func (c *session) Write(ctx context.Context, msg jsonrpc.Message) error {
	tags := nostr.Tags{{"p", c.key.client}}
	c.mu.Lock()
	wrap := c.wrap
	if resp, ok := msg.(*jsonrpc.Response); ok {
		event, _ := resp.ID.Raw().(string)
		call, found := c.pending[event]
		if !found {
			c.mu.Unlock()
			c.srv.log.Debug("contextvm: response to no pending request", "id", resp.ID.Raw())
			return nil
		}
		delete(c.pending, event)
		if call.stranger {
			c.srv.release()
		}
		msg = &jsonrpc.Response{ID: call.id, Result: resp.Result, Error: resp.Error}
		tags, wrap = append(tags, nostr.Tag{"e", event}), call.wrap
	}
	if !c.tagged {
		c.tagged = true
		tags = append(tags, c.srv.discoveryTags()...)
	}
	c.mu.Unlock()
	if err := c.srv.send(ctx, c.sk, c.key.client, msg, tags, wrap); err != nil {
		c.srv.log.Warn("contextvm: message not sent", "agent", c.key.agent, "to", c.key.client, "err", err)
	}
	return nil
}

// Close ends the session (its server's Read sees io.EOF). Idempotent.
func (c *session) Close() error {
	c.once.Do(func() {
		close(c.done)
		c.mu.Lock()
		defer c.mu.Unlock()
		for event, call := range c.pending { // never answered now
			delete(c.pending, event)
			if call.stranger {
				c.srv.release()
			}
		}
	})
	return nil
}

// SessionID names the session.
func (c *session) SessionID() string { return c.key.agent + ":" + c.key.client }

func (c *session) lastUsed() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// discoveryTags are the capability tags a server sends with the first
// message of each session (and puts in its announcement).
func (s *Server) discoveryTags() nostr.Tags {
	if s.cfg.Encryption == EncryptionDisabled {
		return nil
	}
	return nostr.Tags{{TagSupportEncryption}, {TagSupportEncryptionEphemeral}}
}
