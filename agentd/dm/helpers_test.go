package dm_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/agentnode/agentnode/relay"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/keyer"
	"github.com/nbd-wtf/go-nostr/nip17"
	"github.com/nbd-wtf/go-nostr/nip59"
)

// deadline bounds every wait; nothing sleeps.
const deadline = 10 * time.Second

// party is a keypair.
type party struct{ sk, pk string }

func newParty() party {
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	return party{sk, pk}
}

// node is a real relay behind httptest plus the agents the DM service
// serves and a Responder that records its calls.
type node struct {
	t      *testing.T
	relay  *relay.Relay
	url    string
	state  string // the service's StatePath
	agents map[string]party
	resp   *recorder
}

func newNode(t *testing.T) *node {
	t.Helper()
	url, r := testrelay.Serve(t, relay.Config{Version: "test"})
	n := &node{t: t, relay: r, url: url,
		state: filepath.Join(t.TempDir(), "dm", "state.json"), agents: map[string]party{}, resp: &recorder{}}
	return n
}

// addAgent makes a local agent.
func (n *node) addAgent() party {
	a := newParty()
	n.agents[a.pk] = a
	return a
}

// config is the service config of n (MaxConcurrent 1: wraps are handled in
// arrival order, which the tests rely on to know earlier ones are done).
func (n *node) config() dm.Config {
	return dm.Config{
		Source:  n.relay,
		Publish: n.relay.Publish,
		Agents: func() []string {
			var pks []string
			for pk := range n.agents {
				pks = append(pks, pk)
			}
			return pks
		},
		Keys: func(_ context.Context, pk string) (string, error) {
			if a, ok := n.agents[pk]; ok {
				return a.sk, nil
			}
			return "", errors.New("no such agent")
		},
		Responder:     n.resp,
		StatePath:     n.state,
		RelayURLs:     []string{n.url},
		MaxConcurrent: 1,
		RateLimit:     dm.RateLimit{Burst: -1},
	}
}

// start runs a service with cfg until it is Ready; it is stopped when the
// test ends unless the returned stop is called first.
func (n *node) start(cfg dm.Config) (stop func()) {
	n.t.Helper()
	_, stop = n.startWith(cfg)
	return stop
}

// startService is start, returning the service.
func (n *node) startService(cfg dm.Config) *dm.Service {
	n.t.Helper()
	svc, _ := n.startWith(cfg)
	return svc
}

func (n *node) startWith(cfg dm.Config) (svc *dm.Service, stop func()) {
	n.t.Helper()
	svc = dm.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	select {
	case <-svc.Ready():
	case err := <-done:
		cancel()
		n.t.Fatalf("run: %v", err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					n.t.Errorf("run: %v", err)
				}
			case <-time.After(30 * time.Second):
				n.t.Error("Run did not return within 30 s of its stop")
			}
		})
	}
	n.t.Cleanup(stop)
	return svc, stop
}

// recorder is a Responder that answers "echo: <text>" (or fails with
// err) and records every call.
type recorder struct {
	mu    sync.Mutex
	calls []call
	err   error
}

type call struct{ agent, from, text string }

func (r *recorder) Respond(_ context.Context, agent, from, text string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{agent, from, text})
	if r.err != nil {
		return "", r.err
	}
	return "echo: " + text, nil
}

func (r *recorder) texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		out = append(out, c.text)
	}
	return out
}

// person is somebody with an ordinary NIP-17 client over a real websocket
// (the project's relayclient, checking signatures; go-nostr's nip17 and
// nip59 build and open the messages), authenticated (NIP-42) so that the
// relay serves its wraps. (agentd/dm's nostr-tools test is the
// independent client.)
type person struct {
	party
	t    *testing.T
	conn *relayclient.Conn
}

func (n *node) person() *person {
	n.t.Helper()
	p := &person{party: newParty(), t: n.t}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	conn, err := relayclient.Dial(ctx, n.url, relayclient.Options{Verify: true})
	if err != nil {
		n.t.Fatal(err)
	}
	n.t.Cleanup(func() { conn.Close() })
	p.conn = conn
	p.authenticate()
	return p
}

// authenticate triggers the relay's challenge (a REQ for kind 1059 that
// names no recipient in #p is refused with auth-required; one naming it
// is served without AUTH, docs/RELAY.md) and answers it.
func (p *person) authenticate() {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	sub, err := p.conn.Subscribe(ctx, nostr.Filters{{Kinds: []int{1059}}})
	if err != nil {
		p.t.Fatal(err)
	}
	defer sub.Close()
	select {
	case reason := <-sub.Closed:
		if !strings.HasPrefix(reason, "auth-required:") {
			p.t.Fatalf("CLOSED %q, want auth-required", reason)
		}
	case <-ctx.Done():
		p.t.Fatal("no CLOSED auth-required for an unauthenticated REQ of kind 1059")
	}
	if err := p.conn.Auth(ctx, p.sk); err != nil {
		p.t.Fatalf("AUTH: %v", err)
	}
}

// send DMs text to recipient the way a NIP-17 client does (nip17.PrepareMessage)
// and returns the rumor sent.
func (p *person) send(recipient, text string) nostr.Event {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	kr, err := keyer.NewPlainKeySigner(p.sk)
	if err != nil {
		p.t.Fatal(err)
	}
	toUs, toThem, err := nip17.PrepareMessage(ctx, text, nil, kr, recipient, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	p.publish(toThem)
	return p.open(toUs)
}

// publish sends evt over the websocket and requires OK true.
func (p *person) publish(evt nostr.Event) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := p.conn.Publish(ctx, &evt); err != nil {
		p.t.Fatalf("publish kind %d: %v", evt.Kind, err)
	}
}

// open unwraps a wrap addressed to p with go-nostr's own nip59.
func (p *person) open(wrap nostr.Event) nostr.Event {
	p.t.Helper()
	kr, _ := keyer.NewPlainKeySigner(p.sk)
	rumor, err := nip59.GiftUnwrap(wrap, func(other, ciphertext string) (string, error) {
		return kr.Decrypt(context.Background(), ciphertext, other)
	})
	if err != nil {
		p.t.Fatalf("unwrap %s: %v", wrap.ID, err)
	}
	return rumor
}

// inbox fetches every wrap to p (stored) and returns the rumors of those
// from somebody else.
func (p *person) inbox() []nostr.Event {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	wraps, err := p.conn.Query(ctx, nostr.Filters{{Kinds: []int{1059}, Tags: nostr.TagMap{"p": {p.pk}}}})
	if err != nil {
		p.t.Fatal(err)
	}
	var out []nostr.Event
	for _, w := range wraps {
		if r := p.open(*w); r.PubKey != p.pk {
			out = append(out, r)
		}
	}
	return out
}

// replyTo waits until p's inbox holds a rumor replying (e tag) to id.
func (p *person) replyTo(id string) nostr.Event {
	p.t.Helper()
	var reply nostr.Event
	testkit.WaitFor(p.t, deadline, "a reply to "+id, func() bool {
		for _, r := range p.inbox() {
			if tagValue(r, "e") == id {
				reply = r
				return true
			}
		}
		return false
	})
	return reply
}

// tagValue is the first value of tag name.
func tagValue(evt nostr.Event, name string) string {
	for _, tag := range evt.Tags {
		if len(tag) >= 2 && tag[0] == name {
			return tag[1]
		}
	}
	return ""
}
