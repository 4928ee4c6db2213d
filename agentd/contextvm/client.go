package contextvm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/backoff"
	"github.com/agentnode/agentnode/internal/netguard"
	"github.com/agentnode/agentnode/internal/relayclient"
)

// ClientTransport reaches a ContextVM server: an mcp.Transport for the
// go-sdk's mcp.Client.Connect.
//
//	t := &contextvm.ClientTransport{Relays: []string{"wss://relay.example"}, SecretKey: sk, Server: serverPubkey}
//	sess, err := mcp.NewClient(impl, nil).Connect(ctx, t, nil)
type ClientTransport struct {
	Relays    []string // where requests go and replies are awaited (at least one)
	SecretKey string   // the caller's key (hex): it signs every request
	Server    string   // the server's pubkey (hex)
	// Encryption: Optional (default) gift-wraps like the stock SDK's
	// client does, as kind 21059 once the server says it supports it and
	// 1059 until then; Required the same; Disabled sends plaintext.
	Encryption Encryption
	Logger     *slog.Logger
	// Network guards the dials of Relays: relays a service_uri names
	// are a stranger's choice, and its zero value refuses loopback,
	// private and link-local addresses (the node's own network). A
	// caller whose Relays are its own sets AllowPrivate.
	Network netguard.Policy
}

var _ mcp.Transport = (*ClientTransport)(nil)

// ErrNoRelay: a ClientTransport without relays.
var ErrNoRelay = errors.New("contextvm: no relay to reach the server on")

// maxUnanswered bounds the ids of requests awaiting an answer.
const maxUnanswered = 4096

// subscribeWait bounds waiting for the reply subscription to be live.
const subscribeWait = 15 * time.Second

// Connect subscribes to the replies on every relay and returns the
// connection once one subscription is live (its EOSE came).
func (t *ClientTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	if len(t.Relays) == 0 {
		return nil, ErrNoRelay
	}
	pub, err := nostr.GetPublicKey(t.SecretKey)
	if err != nil {
		return nil, fmt.Errorf("contextvm: client key: %w", err)
	}
	log := t.Logger
	if log == nil {
		log = slog.Default()
	}
	runCtx, cancel := context.WithCancel(context.Background())
	c := &clientConn{t: t, pub: pub, log: log, cancel: cancel, in: make(chan jsonrpc.Message, 64),
		live: make(chan struct{}), closed: make(chan struct{}), sent: map[string]bool{}, seen: newSeen(10*time.Minute, DefaultReplayIDs, time.Now),
		refused: make(chan error, len(t.Relays))}
	guard := t.Network
	guard.Label = cmp.Or(guard.Label, "contextvm")
	for _, u := range t.Relays {
		r := relayclient.NewWith(u, t.SecretKey, log, relayclient.Options{Guard: &guard})
		c.relays = append(c.relays, r)
		c.wg.Go(func() { c.listen(runCtx, r) })
	}
	if err := c.awaitLive(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// awaitLive waits for the first live reply subscription; it fails when
// ctx ends, after subscribeWait, or when the guard refused every relay.
func (c *clientConn) awaitLive(ctx context.Context) error {
	timeout := time.NewTimer(subscribeWait)
	defer timeout.Stop()
	var refused []error
	for {
		select {
		case <-c.live:
			return nil
		case err := <-c.refused:
			if refused = append(refused, err); len(refused) == len(c.relays) {
				return fmt.Errorf("contextvm: no relay may be dialled: %w", errors.Join(refused...))
			}
		case <-ctx.Done():
			return fmt.Errorf("contextvm: no relay subscription became live: %w", context.Cause(ctx))
		case <-timeout.C:
			return errors.New("contextvm: no relay subscription became live")
		}
	}
}

// clientConn is the client side of one ContextVM session.
type clientConn struct {
	t      *ClientTransport
	pub    string
	log    *slog.Logger
	relays []*relayclient.Relay
	cancel context.CancelFunc
	wg     sync.WaitGroup
	in     chan jsonrpc.Message
	seen   *seen

	liveOnce  sync.Once
	refused   chan error // a relay the guard refused, once each (buffered for all)
	closed    chan struct{}
	live      chan struct{}
	closeOnce sync.Once

	mu        sync.Mutex
	sent      map[string]bool // our requests' event ids, until answered
	ephemeral bool            // the server said support_encryption_ephemeral
	tagged    bool            // our discovery tags went out
}

// replyRetry spaces the reply subscription's reconnections
// (internal/backoff, the one schedule; it starts over after a subscription
// that went live).
var replyRetry = backoff.Backoff{Min: 250 * time.Millisecond, Max: 30 * time.Second}

// listen keeps a subscription to the replies on r until ctx ends,
// subscribing again (on replyRetry's schedule) when it drops.
func (c *clientConn) listen(ctx context.Context, r *relayclient.Relay) {
	defer r.Close()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	f := nostr.Filter{Kinds: []int{KindMessage, KindGiftWrap, KindEphemeralGiftWrap}, Tags: nostr.TagMap{"p": {c.pub}},
		Since: ptr(nostr.Now())}
	replyRetry.Loop(ctx, func(ctx context.Context) (bool, error) {
		var up atomic.Bool
		err := r.Subscribe(ctx, nostr.Filters{f}, c.receive, func() {
			up.Store(true)
			c.liveOnce.Do(func() { close(c.live) })
		})
		if blocked := (*netguard.BlockedError)(nil); errors.As(err, &blocked) {
			c.log.Warn("contextvm: relay not dialled: not a public address", "relay", r.URL(), "err", err)
			c.refused <- err
			stop() // it would be refused again
		}
		return up.Load(), err
	}, func(rt backoff.Retry) {
		c.log.Debug("contextvm: reply subscription ended", "relay", r.URL(), "err", rt.Err, "retry_in", rt.Wait)
	})
}

func ptr[T any](v T) *T { return &v }

// receive takes a reply event: from the server, new, and decodable.
func (c *clientConn) receive(evt *nostr.Event) {
	env, err := Open(evt, c.t.SecretKey)
	if err != nil || env.Event.PubKey != c.t.Server {
		return
	}
	if !c.expected(env) {
		c.log.Debug("contextvm: reply to no request of ours dropped", "id", env.Event.ID)
		return
	}
	// A response is taken once (expected forgets its request); other
	// messages are remembered. A stored reply to an earlier session,
	// byte-identical to the one this session awaits (same second, same
	// request), must not count as seen: it was not taken.
	if _, resp := env.Message.(*jsonrpc.Response); !resp && c.seen.add(env.Event.ID) {
		c.log.Debug("contextvm: duplicate message dropped", "id", env.Event.ID)
		return
	}
	select {
	case c.in <- env.Message:
	default:
		c.log.Warn("contextvm: client queue full, reply dropped", "id", env.Event.ID)
	}
}

// expected reports whether a message from the server is for this
// connection: a response must e-tag a request we sent and have not seen
// answered (a stored reply to an earlier session's request, with the
// same JSON-RPC id, is not ours). It learns the server's capability tags.
func (c *clientConn) expected(env *Envelope) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hasFlag(env.Event.Tags, TagSupportEncryptionEphemeral) {
		c.ephemeral = true
	}
	if _, ok := env.Message.(*jsonrpc.Response); !ok {
		return true
	}
	e := tagValue(env.Event, "e")
	if !c.sent[e] {
		return false
	}
	delete(c.sent, e)
	return true
}

// Read returns the next message from the server.
func (c *clientConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.in:
		return msg, nil
	case <-c.done():
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *clientConn) done() <-chan struct{} { return c.closed }

// Write signs msg, wraps it as the policy says and publishes it to every
// relay; it fails only when no relay took it.
func (c *clientConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	tags := nostr.Tags{{"p", c.t.Server}}
	c.mu.Lock()
	if !c.tagged {
		c.tagged = true
		if c.t.Encryption != EncryptionDisabled {
			tags = append(tags, nostr.Tags{{TagSupportEncryption}, {TagSupportEncryptionEphemeral}}...)
		}
	}
	wrap := c.wrapKind()
	c.mu.Unlock()
	inner, err := NewMessage(msg, c.t.SecretKey, tags)
	if err != nil {
		return err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.mu.Lock()
		if len(c.sent) >= maxUnanswered { // calls the server never answered (their callers timed out)
			clear(c.sent)
		}
		c.sent[inner.ID] = true // before the publish: the reply may come first
		c.mu.Unlock()
	}
	evt, err := Seal(inner, c.t.Server, wrap)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range c.relays {
		if err := r.Publish(ctx, evt); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == len(c.relays) {
		return fmt.Errorf("contextvm: publish: %w", errors.Join(errs...))
	}
	return nil
}

// wrapKind is how the next message goes. c.mu is held.
func (c *clientConn) wrapKind() int {
	switch {
	case c.t.Encryption == EncryptionDisabled:
		return 0
	case c.ephemeral:
		return KindEphemeralGiftWrap
	}
	return KindGiftWrap
}

// Close stops the subscriptions and waits for them.
func (c *clientConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.cancel()
		c.wg.Wait()
	})
	return nil
}

// SessionID names the session.
func (c *clientConn) SessionID() string { return c.pub + ":" + c.t.Server }
