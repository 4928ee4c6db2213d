package agentrpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/internal/httpauth"
	"github.com/agentnode/agentnode/jsonrpc"
)

// Directory is what the endpoint needs of the agent directory
// (*directory.Directory satisfies it).
type Directory interface {
	Search(q directory.Query) []directory.Agent
	Get(id string) (directory.Agent, bool)
	Metrics(id string) (directory.Metrics, bool)
	Register(ctx context.Context, proof *nostr.Event) (directory.Agent, error)
	Unregister(ctx context.Context, agentID string, proof *nostr.Event) error
	// RegisterClaim and HeartbeatClaim list registrations in the
	// protocol's own form (auth object, free-form id, no proof) as
	// unverified (docs/AGENT-CONTEXT-PROTOCOL.md).
	RegisterClaim(ctx context.Context, c directory.Claim) (directory.Agent, error)
	HeartbeatClaim(ctx context.Context, id, status string) (directory.Agent, error)
	// UnregisterClaim removes an unverified registration.
	UnregisterClaim(ctx context.Context, id string) error
	Evaluate(ctx context.Context, evaluatorSK, agent string, score float64, review, ref string) (*nostr.Event, error)
}

// Messenger runs a local agent on one message (the router and model loop:
// (*agentd.Daemon).Chat behind an adapter) and returns its answer.
type Messenger interface {
	Message(ctx context.Context, agent, conversation, text string) (string, error)
}

// MessengerFunc adapts a function to Messenger, e.g.
//
//	agentrpc.MessengerFunc(func(ctx context.Context, agent, conv, text string) (string, error) {
//		r, err := d.Chat(ctx, agent, conv, text)
//		return r.Answer, err
//	})
type MessengerFunc func(ctx context.Context, agent, conversation, text string) (string, error)

// Message calls f.
func (f MessengerFunc) Message(ctx context.Context, agent, conversation, text string) (string, error) {
	return f(ctx, agent, conversation, text)
}

// Caller calls an agent on another node over kind 25910
// (*nostrrpc.Client satisfies it). fromAgent must be a local agent.
type Caller interface {
	CallAgent(ctx context.Context, fromAgent, target, method string, params json.RawMessage) (json.RawMessage, error)
}

// Model completes a conversation (*llm.Client satisfies it).
type Model interface {
	Complete(ctx context.Context, req llm.Request) (*llm.Response, error)
}

// Consent is the owner's say (*consent.Consent satisfies it).
type Consent interface {
	Check(ctx context.Context, req consent.Request, approvalID string) error
	Wait(ctx context.Context, approvalID string) error
	Revoked(ctx context.Context, agent string) bool
	Required(op string) bool
}

// DefaultTimeout bounds a delegated task without a deadline, and a message
// to a local agent.
const DefaultTimeout = 2 * time.Minute

// DefaultRemoteTimeout bounds a message to an agent on another node: one
// the directory lists as available but that does not answer gets -32003
// after this long.
const DefaultRemoteTimeout = 15 * time.Second

// Config wires a Service. Directory, Tasks and Messenger are required.
type Config struct {
	Directory Directory
	Tasks     *tasks.Store
	Messenger Messenger
	// Consent: nil means no operation needs approval and nobody is revoked.
	Consent Consent
	// Caller reaches remote agents; nil: local agents only.
	Caller Caller
	// Model serves sampling/createMessage; nil: that method fails with -32008.
	Model Model
	// Local reports whether an agent (hex) runs on this node.
	Local func(agent string) bool
	// Runs, when set, reports whether this instance executes the tasks of
	// agent (a local assignee's; for a remote assignee, its local
	// source's). With several instances on one task store (serve
	// --postgres) it is the instance running the agent: the others leave
	// its tasks assigned (or waiting for consent), and the instance that
	// runs the agent picks them up with Pickup; Run resumes nothing then.
	// nil: every task is executed where it is delegated.
	Runs func(agent string) bool
	// Forward, when set, is asked about every call whose params name an
	// agent (params.target; for tools/call, params.arguments.target) before
	// it is served: handled true means it was answered elsewhere (serve
	// --postgres: by the instance running the agent) with result or err (a
	// *jsonrpc.Error from there as is). It applies to every transport, so a
	// call in a batch or over a websocket is forwarded on its own, and the
	// batch's answer keeps its order.
	Forward func(ctx context.Context, method string, params json.RawMessage, target string) (result json.RawMessage, handled bool, err error)
	// Keys returns a local agent's secret key (agentEvaluate signs with it).
	Keys func(ctx context.Context, agent string) (string, error)
	// Name and Version are the serverInfo initialize returns.
	Name, Version string
	// Timeout bounds a message or a task without deadline; 0: DefaultTimeout.
	Timeout time.Duration
	// RemoteTimeout bounds a message to a remote agent; 0:
	// DefaultRemoteTimeout.
	RemoteTimeout time.Duration
	// NewID makes correlation ids; nil: random.
	NewID func() string
	// Token is required of every HTTP request as "Authorization: Bearer
	// <token>" (the node's API token; internal/httpauth): the endpoint acts
	// as the node's agents. Empty refuses every HTTP request. Remote nodes
	// use kind 25910 instead.
	Token string
	// Options are the JSON-RPC server's (MapError is set here).
	Options jsonrpc.Options
	Logger  *slog.Logger
}

// Service is the Agent Context Protocol endpoint: a jsonrpc.Server with
// the agent/*, resources/*, tools/*, sampling/* and initialize methods,
// and the nostrrpc.Handler remote nodes reach over kind 25910. New starts
// nothing; Run resumes the tasks left waiting for consent, is Ready, and
// stops every task runner and waits for them when its ctx ends.
type Service struct {
	cfg Config
	log *slog.Logger
	rpc *jsonrpc.Server

	mu     sync.Mutex // ctx, cancel, closed
	ctx    context.Context
	cancel context.CancelFunc
	closed bool
	active map[string]bool // tasks with a runner here
	wg     sync.WaitGroup
	ready  chan struct{} // closed by Run once resume is done

	aliases aliases // free-form ids of proven agents
}

// New returns a Service for cfg with every method registered.
func New(cfg Config) *Service {
	cfg = withDefaults(cfg)
	s := &Service{cfg: cfg, log: cfg.Logger, ready: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	opts := cfg.Options
	opts.MapError = mapError
	opts.Logger = cfg.Logger
	s.rpc = jsonrpc.NewServer(opts)
	s.register()
	return s
}

func withDefaults(cfg Config) Config {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RemoteTimeout <= 0 {
		cfg.RemoteTimeout = DefaultRemoteTimeout
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.NewID == nil {
		cfg.NewID = func() string {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			return hex.EncodeToString(b)
		}
	}
	if cfg.Local == nil {
		cfg.Local = func(string) bool { return false }
	}
	if cfg.Keys == nil {
		cfg.Keys = func(context.Context, string) (string, error) { return "", errors.New("no keys") }
	}
	if cfg.Name == "" {
		cfg.Name = "agentnode"
	}
	return cfg
}

func (s *Service) register() {
	for method, h := range map[string]jsonrpc.Handler{
		"initialize":                s.initialize,
		"notifications/initialized": s.ack,
		"ping":                      s.ping,
		"agent/register":            s.agentRegister,
		"agent/unregister":          s.agentUnregister,
		"agent/heartbeat":           s.agentHeartbeat,
		"agent/error":               s.agentError,
		"agent/message":             s.agentMessage,
		"agent/delegate":            s.agentDelegate,
		"resources/list":            s.resourcesList,
		"resources/templates/list":  s.resourceTemplatesList,
		"resources/read":            s.resourcesRead,
		"tools/list":                s.toolsList,
		"tools/call":                s.toolsCall,
		"sampling/createMessage":    s.samplingCreateMessage,
	} {
		s.rpc.Register(method, s.forwarding(method, s.marked(method, h)))
	}
}

// forwarding asks Config.Forward about calls naming an agent before h
// serves them.
func (s *Service) forwarding(method string, h jsonrpc.Handler) jsonrpc.Handler {
	if s.cfg.Forward == nil {
		return h
	}
	return func(ctx context.Context, params json.RawMessage) (any, error) {
		var p struct {
			Target    string `json:"target"`
			Arguments struct {
				Target string `json:"target"`
			} `json:"arguments"`
		}
		if json.Unmarshal(params, &p) == nil {
			target := p.Target
			if target == "" && method == "tools/call" {
				target = p.Arguments.Target
			}
			if target != "" {
				if res, handled, err := s.cfg.Forward(ctx, method, params, target); handled {
					if err != nil {
						return nil, err
					}
					return res, nil
				}
			}
		}
		return h(ctx, params)
	}
}

// marked gates h behind the owner's approval when the policy names
// consent.MethodOp(method) ("anything the owner marks"): the caller gets
// -32004 and retries with params._meta.approvalId.
func (s *Service) marked(method string, h jsonrpc.Handler) jsonrpc.Handler {
	op := consent.MethodOp(method)
	return func(ctx context.Context, params json.RawMessage) (any, error) {
		if s.cfg.Consent != nil && s.cfg.Consent.Required(op) {
			var p struct {
				Meta Meta `json:"_meta"`
			}
			_ = json.Unmarshal(params, &p)
			if err := s.cfg.Consent.Check(ctx, consent.Request{Op: op, Summary: "call " + method}, p.Meta.ApprovalID); err != nil {
				return nil, err
			}
		}
		return h(ctx, params)
	}
}

// Server is the JSON-RPC server (to Handle messages without HTTP).
func (s *Service) Server() *jsonrpc.Server { return s.rpc }

// ServeHTTP serves the endpoint: POST application/json (one request or a
// batch) and WebSocket upgrades. Mount it at /acp.
// A request without Config.Token (or any request, when Token is empty)
// is 401.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := httpauth.Check(w, r, s.cfg.Token); err != nil {
		httpauth.Refuse(w, err)
		return
	}
	s.rpc.ServeHTTP(w, r)
}

// Run resumes what the task store holds, is Ready, runs tasks until ctx
// ends, then stops every task runner and waits for them. A resume that
// fails (or is stopped) stops them too.
func (s *Service) Run(ctx context.Context) error {
	if err := s.resume(ctx); err != nil {
		return errors.Join(err, s.stop())
	}
	close(s.ready)
	<-ctx.Done()
	return s.stop()
}

// Ready is closed once Run has resumed the stored tasks: requests that add
// tasks may come.
func (s *Service) Ready() <-chan struct{} { return s.ready }

// resume resumes what the task store holds from before a restart: tasks
// waiting for the owner's consent wait again; tasks that were assigned or
// running fail ("interrupted by a node restart"), since their runner is gone
// and re-running them could do the work twice.
func (s *Service) resume(ctx context.Context) error {
	if s.cfg.Runs != nil { // shared task store: Pickup, once an agent runs here
		return nil
	}
	list, err := s.cfg.Tasks.List(ctx, tasks.Filter{Status: []tasks.Status{tasks.StatusPending, tasks.StatusAssigned, tasks.StatusRunning}})
	if err != nil {
		return err
	}
	for _, t := range list {
		if t.Status == tasks.StatusPending && t.ApprovalID != "" {
			s.goRun(t.ID, func(ctx context.Context) { s.awaitConsent(ctx, t) })
			continue
		}
		s.fail(ctx, t.ID, "interrupted by a node restart")
	}
	return nil
}

// stop stops every task runner and waits for them. Tasks they were running
// fail. Stopping twice is a no-op.
func (s *Service) stop() error {
	s.mu.Lock()
	s.closed = true
	s.cancel()
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// goRun runs fn, the runner of task id, in a goroutine owned by s (stop
// cancels and waits), unless the task has a runner here already.
func (s *Service) goRun(id string, fn func(ctx context.Context)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.active[id] {
		return false
	}
	if s.active == nil {
		s.active = map[string]bool{}
	}
	s.active[id] = true
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.active, id)
			s.mu.Unlock()
		}()
		fn(s.ctx)
	}()
	return true
}

// running reports whether task id has a runner here.
func (s *Service) running(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active[id]
}

// executes reports whether this instance executes t (Config.Runs).
func (s *Service) executes(t tasks.Task) bool {
	if s.cfg.Runs == nil {
		return true
	}
	agent := t.Assignee
	if t.Remote {
		agent = t.Source
	}
	return agent != "" && s.cfg.Runs(agent)
}

// Pickup starts the tasks this instance executes (Config.Runs) that have
// no runner here: assigned ones run, pending ones wait for the owner's
// consent. A running task without a runner here was being executed by an
// instance that stopped running its agent (it died, or handed the agent
// over): it fails, "interrupted", as at a restart, since running it again
// could do the work twice. Call it when an agent starts running here and
// when another instance changed a task.
func (s *Service) Pickup(ctx context.Context) error {
	list, err := s.cfg.Tasks.List(ctx, tasks.Filter{Status: []tasks.Status{tasks.StatusPending, tasks.StatusAssigned, tasks.StatusRunning}})
	if err != nil {
		return err
	}
	for _, t := range list {
		if t.Assignee == "" || !s.executes(t) || s.running(t.ID) {
			continue
		}
		switch t.Status {
		case tasks.StatusPending:
			if t.ApprovalID != "" {
				s.goRun(t.ID, func(ctx context.Context) { s.awaitConsent(ctx, t) })
			}
		case tasks.StatusAssigned:
			s.goRun(t.ID, func(ctx context.Context) { s.run(ctx, t) })
		case tasks.StatusRunning:
			s.fail(ctx, t.ID, "interrupted: the instance running its agent stopped running it")
		}
	}
	return nil
}

// revoked reports whether any of the agents is revoked.
func (s *Service) revoked(ctx context.Context, agents ...string) (string, bool) {
	if s.cfg.Consent == nil {
		return "", false
	}
	for _, a := range agents {
		if a != "" && s.cfg.Consent.Revoked(ctx, a) {
			return a, true
		}
	}
	return "", false
}

// checkRevoked fails with -32005 when any of the agents is revoked.
func (s *Service) checkRevoked(ctx context.Context, agents ...string) error {
	if a, ok := s.revoked(ctx, agents...); ok {
		return agentRevoked(a)
	}
	return nil
}

// check asks consent for req (nil Consent: allowed).
func (s *Service) check(ctx context.Context, req consent.Request, approvalID string) error {
	if s.cfg.Consent == nil {
		return nil
	}
	return s.cfg.Consent.Check(ctx, req, approvalID)
}

var _ Model = (*llm.Client)(nil)
