package agentrpc_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/requester"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/agentnode/agentnode/relay"
)

// testWait bounds every wait (a hang fails; nothing is timed).
const testWait = 20 * time.Second

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// key is a test identity derived from its name, so transcripts are stable.
type key struct{ name, sk, pk string }

func named(name string) key {
	h := sha256.Sum256([]byte("agentrpc-test-" + name))
	sk := hex.EncodeToString(h[:])
	pk, _ := nostr.GetPublicKey(sk)
	return key{name, sk, pk}
}

var (
	alice = named("alice") // local
	bob   = named("bob")   // local, capability "analysis"
	carol = named("carol") // known from heartbeats, not local
	dave  = named("dave")  // registers over agent/register
	erin  = named("erin")  // unknown everywhere
)

// echo is a Messenger that answers at once: "<name> heard: <text>".
type echo struct {
	names map[string]string
	mu    sync.Mutex
	calls []string // conversation of each call
	asked []string // the requester of each call (agentd/requester)
}

func newEcho(keys ...key) *echo {
	e := &echo{names: map[string]string{}}
	for _, k := range keys {
		e.names[k.pk] = k.name
	}
	return e
}

func (e *echo) Message(ctx context.Context, agent, conversation, text string) (string, error) {
	e.mu.Lock()
	e.calls = append(e.calls, conversation)
	e.asked = append(e.asked, requester.From(ctx))
	e.mu.Unlock()
	name, ok := e.names[agent]
	if !ok {
		return "", fmt.Errorf("echo: %s is not local", agent)
	}
	return name + " heard: " + text, nil
}

// count is how many messages the echo answered.
func (e *echo) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.calls)
}

// counter makes ids prefix-1, prefix-2, ...
func counter(prefix string) func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("%s-%d", prefix, n)
	}
}

func startDirectory(t testing.TB, rl *relay.Relay, local func(string) bool, now func() time.Time) *directory.Directory {
	t.Helper()
	d := directory.New(directory.Config{Source: rl, Local: local, Now: now, Logger: quiet})
	testkit.Run(t, "directory", d.Run, d.Ready())
	return d
}

func heartbeat(t testing.TB, k key, status string, load, capacity int, caps ...string) *nostr.Event {
	t.Helper()
	evt, err := directory.BuildHeartbeat(k.sk, directory.Status{Status: status, Load: load, Capacity: capacity,
		Capabilities: caps, Card: &events.AgentCard{Name: k.name}}, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return evt
}

func publish(t testing.TB, rl interface {
	Publish(context.Context, *nostr.Event) error
}, evt *nostr.Event) {
	t.Helper()
	if err := rl.Publish(context.Background(), evt); err != nil {
		t.Fatal(err)
	}
}

func listed(d *directory.Directory, k key) func() bool {
	return func() bool { a, ok := d.Get(k.pk); return ok && a.Available }
}

func localSet(keys ...key) func(string) bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k.pk] = true
	}
	return func(pk string) bool { return m[strings.ToLower(pk)] }
}

func keysOf(keys ...key) func(context.Context, string) (string, error) {
	return func(_ context.Context, pk string) (string, error) {
		for _, k := range keys {
			if k.pk == pk {
				return k.sk, nil
			}
		}
		return "", fmt.Errorf("no key for %s", pk)
	}
}

func openTasks(t testing.TB, dir string, now func() time.Time) *tasks.Store {
	t.Helper()
	st, err := tasks.Open(context.Background(), tasks.Config{Path: filepath.Join(dir, "tasks.db"), Now: now,
		NewID: counter("task"), Interval: 10 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func openConsent(t testing.TB, dir string, require ...string) *consent.Consent {
	t.Helper()
	c, err := consent.Open(context.Background(), consent.Config{Path: filepath.Join(dir, "consent.db"),
		Policy: consent.Policy{Require: require}, NewID: counter("approval")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// fixture is one node: relay, directory, tasks, consent and the service.
type fixture struct {
	relay   *relay.Relay
	dir     *directory.Directory
	tasks   *tasks.Store
	consent *consent.Consent
	echo    *echo
	svc     *agentrpc.Service
}

// testToken is the API token of the tests' services; withToken sends it.
const testToken = "test-api-token"

// withToken serves h to requests that it first gives the API token, as an
// authorised client would.
func withToken(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+testToken)
		h.ServeHTTP(w, r)
	})
}

// newFixture is the conformance node: alice and bob local, carol known
// from a heartbeat, no route to other nodes, no model.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{relay: testrelay.Open(t), echo: newEcho(alice, bob)}
	local := localSet(alice, bob)
	f.dir = startDirectory(t, f.relay, local, nil)
	publish(t, f.relay, heartbeat(t, alice, "active", 0, 2, "chat"))
	publish(t, f.relay, heartbeat(t, bob, "active", 0, 4, "analysis", "chat"))
	publish(t, f.relay, heartbeat(t, carol, "active", 1, 2, "analysis"))
	for _, k := range []key{alice, bob, carol} {
		testkit.WaitFor(t, testWait, k.name+" in the directory", listed(f.dir, k))
	}
	frozen := testkit.NewClock(time.Now().UTC().Truncate(time.Second))
	tmp := t.TempDir()
	f.tasks = openTasks(t, tmp, frozen.Now)
	f.consent = openConsent(t, tmp, consent.OpDelegateRemote, consent.OpPrivateState)
	f.svc = agentrpc.New(agentrpc.Config{Token: testToken, Directory: f.dir, Tasks: f.tasks, Consent: f.consent, Messenger: f.echo,
		Local: local, Keys: keysOf(alice, bob), Name: "agentnode", Version: "test", NewID: counter("corr"), Logger: quiet})
	testkit.Run(t, "acp", f.svc.Run, f.svc.Ready())
	return f
}
