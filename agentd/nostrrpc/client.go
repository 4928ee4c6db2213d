package nostrrpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/jsonrpc"
)

// ClientConfig wires a Client.
type ClientConfig struct {
	// Relays are the websocket URLs requests are published to and replies
	// awaited on.
	Relays []string
	// Keys returns a local agent's secret key (hex): requests are signed,
	// encrypted and AUTHed as the calling agent.
	Keys   func(ctx context.Context, agentPubkey string) (secretKeyHex string, err error)
	Logger *slog.Logger
}

// Client calls agents over kind 25910. It keeps one connection per (relay,
// calling agent), opened on first use; Close closes them. Safe for
// concurrent use.
type Client struct {
	cfg ClientConfig

	mu     sync.Mutex
	conns  map[string]*relayclient.Relay // url + " " + agent
	closed bool
}

// A Client is what the nuwa_a2a binding calls through.
var _ bindings.A2ACaller = (*Client)(nil)

// NewClient returns a Client for cfg. It connects to nothing yet.
func NewClient(cfg ClientConfig) *Client {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Client{cfg: cfg, conns: map[string]*relayclient.Relay{}}
}

// Close closes every connection.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	conns := c.conns
	c.conns = map[string]*relayclient.Relay{}
	c.mu.Unlock()
	var errs []error
	for _, w := range conns {
		errs = append(errs, w.Close())
	}
	return errors.Join(errs...)
}

// CallAgent sends method(params) from the local agent fromAgent to target
// (hex pubkeys) and returns the result. It subscribes for the reply on
// every relay before publishing the request to them, and takes the first
// valid reply (signed by target, e-tagging the request, decrypting, same
// JSON-RPC id). ctx's deadline is the call's: reaching it is TIMEOUT.
// A JSON-RPC error is a *capabilities.Error (-32601: NOT_FOUND, -32602:
// INVALID_INPUT, a cap_code carried in data: that code, else
// EXECUTION_FAILED).
func (c *Client) CallAgent(ctx context.Context, fromAgent, target, method string, params json.RawMessage) (json.RawMessage, error) {
	sk, err := c.key(ctx, fromAgent)
	if err != nil {
		return nil, err
	}
	if !isHexKey(target) {
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "target %q is not a 64-hex pubkey", target)
	}
	var p any
	if params != nil {
		p = params
	}
	req, err := jsonrpc.NewRequest(newID(), method, p)
	if err != nil {
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "%s params: %v", method, err)
	}
	evt, err := newEvent(req, sk, target, nostr.Tags{{"p", target}})
	if err != nil {
		return nil, err
	}
	return c.roundTrip(ctx, fromAgent, sk, target, evt, req.ID, method)
}

// key returns fromAgent's secret key and checks it matches.
func (c *Client) key(ctx context.Context, fromAgent string) (string, error) {
	sk, err := c.cfg.Keys(ctx, fromAgent)
	if err != nil {
		return "", capabilities.Errorf(capabilities.CodePermissionDenied, "agent %s has no key on this node", short(fromAgent))
	}
	if pk, err := nostr.GetPublicKey(sk); err != nil || pk != fromAgent {
		return "", capabilities.Errorf(capabilities.CodePermissionDenied, "the key for agent %s does not match it", short(fromAgent))
	}
	return sk, nil
}

// roundTrip subscribes, publishes and waits for the reply.
func (c *Client) roundTrip(ctx context.Context, from, sk, target string, evt *nostr.Event, id json.RawMessage, method string) (json.RawMessage, error) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }() // the subscriptions end with ctx
	replies := make(chan *nostr.Event, 16)
	filter := nostr.Filter{Kinds: []int{Kind}, Tags: nostr.TagMap{"p": {from}, "e": {evt.ID}}}
	ready, err := c.subscribeAll(ctx, &wg, from, sk, filter, replies)
	if err != nil {
		return nil, c.ctxError(ctx, target, method, err)
	}
	if err := publishAll(ctx, ready, evt); err != nil {
		return nil, c.ctxError(ctx, target, method, err)
	}
	return awaitReply(ctx, replies, sk, target, from, evt.ID, id, method)
}

// subOutcome is how one relay's reply subscription started.
type subOutcome struct {
	w   *relayclient.Relay
	err error // nil: live (EOSE seen)
}

// subscribeAll opens the reply subscription on every relay and returns
// those on which it is live. The subscriptions end with ctx; wg waits for them.
func (c *Client) subscribeAll(ctx context.Context, wg *sync.WaitGroup, from, sk string, f nostr.Filter, replies chan<- *nostr.Event) ([]*relayclient.Relay, error) {
	results := make(chan subOutcome, len(c.cfg.Relays))
	for _, url := range c.cfg.Relays {
		w, err := c.conn(url, from, sk)
		if err != nil {
			results <- subOutcome{nil, err}
			continue
		}
		var once sync.Once
		report := func(err error) { once.Do(func() { results <- subOutcome{w, err} }) }
		wg.Go(func() {
			err := w.Subscribe(ctx, nostr.Filters{f}, func(e *nostr.Event) {
				select {
				case replies <- e:
				case <-ctx.Done():
				}
			}, func() { report(nil) })
			report(fmt.Errorf("%s: %w", url, err))
		})
	}
	return collectReady(ctx, results, len(c.cfg.Relays))
}

// collectReady waits for n outcomes and returns the live relays; none
// live is ErrNoRelay with every relay's reason.
func collectReady(ctx context.Context, results <-chan subOutcome, n int) ([]*relayclient.Relay, error) {
	var (
		ready []*relayclient.Relay
		errs  []error
	)
	for range n {
		select {
		case o := <-results:
			if o.err != nil {
				errs = append(errs, o.err)
			} else {
				ready = append(ready, o.w)
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if len(ready) == 0 {
		return nil, fmt.Errorf("%w: subscribe: %w", ErrNoRelay, errors.Join(errs...))
	}
	return ready, nil
}

// publishAll sends evt to every live relay; one acceptance is enough.
func publishAll(ctx context.Context, relays []*relayclient.Relay, evt *nostr.Event) error {
	var errs []error
	for _, w := range relays {
		if err := w.Publish(ctx, evt); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == len(relays) {
		return fmt.Errorf("%w: publish: %w", ErrNoRelay, errors.Join(errs...))
	}
	return nil
}

// awaitReply returns the result of the first valid reply.
func awaitReply(ctx context.Context, replies <-chan *nostr.Event, sk, target, from, reqID string, id json.RawMessage, method string) (json.RawMessage, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, timeoutError(ctx, target, method)
		case evt := <-replies:
			resp, ok := validReply(evt, sk, target, from, reqID, id)
			if !ok {
				continue
			}
			if resp.Error != nil {
				return nil, fromRPCError(target, method, resp.Error)
			}
			if resp.Result == nil {
				return nil, &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: fmt.Sprintf("agent %s: %s: empty response", short(target), method), Err: errNoResult}
			}
			return resp.Result, nil
		}
	}
}

// validReply checks a candidate reply: right kind, author and tags, a
// valid signature, decrypts, same JSON-RPC id.
func validReply(evt *nostr.Event, sk, target, from, reqID string, id json.RawMessage) (*jsonrpc.Response, bool) {
	if evt.Kind != Kind || evt.PubKey != target || tagValue(evt, "e") != reqID || tagValue(evt, "p") != from {
		return nil, false
	}
	if !signed(evt) {
		return nil, false
	}
	plain, err := open(evt, sk)
	if err != nil {
		return nil, false
	}
	var resp jsonrpc.Response
	if json.Unmarshal(plain, &resp) != nil || resp.JSONRPC != "2.0" || string(resp.ID) != string(id) {
		return nil, false
	}
	return &resp, true
}

// ctxError prefers the context's verdict (TIMEOUT) over a relay error.
func (c *Client) ctxError(ctx context.Context, target, method string, err error) error {
	if ctx.Err() != nil {
		return timeoutError(ctx, target, method)
	}
	return &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: fmt.Sprintf("agent %s: %s: no relay took the call", short(target), method), Err: err}
}

func timeoutError(ctx context.Context, target, method string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &capabilities.Error{Code: capabilities.CodeTimeout, Message: fmt.Sprintf("agent %s: %s: no reply in time", short(target), method), Err: ctx.Err()}
	}
	return ctx.Err()
}

// conn returns the connection to url as agent, creating it on first use.
func (c *Client) conn(url, agent, sk string) (*relayclient.Relay, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("nostrrpc: client closed")
	}
	k := url + " " + agent
	w := c.conns[k]
	if w == nil {
		w = relayclient.New(url, sk, c.cfg.Logger)
		c.conns[k] = w
	}
	return w, nil
}

// newID is a fresh random JSON-RPC id.
func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func isHexKey(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32 && s == strings.ToLower(s)
}
