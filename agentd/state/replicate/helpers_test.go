package replicate_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/replicate"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/agentnode/agentnode/relay"
)

const (
	capNote  = "did:nuwa:cap:note@1.0.0"
	noteURI  = "did:nuwa:state:note#v1"
	capTeam  = "did:nuwa:cap:team@1.0.0"
	teamURI  = "did:nuwa:state:team#v1"
	capBoard = "did:nuwa:cap:board@1.0.0"
	boardURI = "did:nuwa:state:board#v1"
)

// noteSchema is the ACP spec's example (private by default).
const noteSchema = `{
  "$id": "did:nuwa:state:note#v1",
  "type": "object",
  "properties": {
    "id": {"type": "string", "format": "uuid"},
    "title": {"type": "string", "x-crdt": "lww_register"},
    "body": {"type": "string", "x-crdt": "rga_text"},
    "tags": {"type": "array", "items": {"type": "string"}, "x-crdt": "grow_only_set"},
    "createdAt": {"type": "string", "format": "date-time"},
    "updatedAt": {"type": "string", "format": "date-time"}
  },
  "required": ["id", "title", "body", "createdAt", "updatedAt"]
}`

// teamSchema is a shared note: every agent of the owner.
var teamSchema = strings.Replace(strings.Replace(noteSchema, "state:note#v1", "state:team#v1", 1),
	`"type": "object",`, `"type": "object", "x-asm": {"x-visibility": "shared"},`, 1)

// boardSchema is a public note.
var boardSchema = strings.Replace(strings.Replace(noteSchema, "state:note#v1", "state:board#v1", 1),
	`"type": "object",`, `"type": "object", "x-asm": {"x-visibility": "public"},`, 1)

const id1 = "11111111-1111-4111-8111-111111111111"

func note(id, title, body string, tags ...string) []byte {
	if tags == nil {
		tags = []string{}
	}
	b, _ := json.Marshal(map[string]any{"id": id, "title": title, "body": body, "tags": tags,
		"createdAt": "2025-05-15T10:00:00Z", "updatedAt": "2025-05-15T10:00:00Z"})
	return b
}

type key struct{ sk, pk string }

func newKey() key {
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	return key{sk, pk}
}

func caller(agent, owner key, capID string) state.Caller {
	return state.Caller{Agent: agent.pk, Owner: owner.pk, Capability: capID, Scope: "sc:test", Verbs: state.AllVerbs}
}

func quietLogger(t *testing.T) *slog.Logger { return testkit.Logger(t, slog.LevelWarn) }

// testRelay is a relay served over a real websocket, whose client
// connections the test can cut (Cut).
type testRelay = testrelay.Cuttable

func openRelay(t *testing.T) *testRelay {
	t.Helper()
	return testrelay.ServeCuttable(t, relay.Config{Version: "test", Logger: quietLogger(t)})
}

// node is one agentnode's state runtime and replicator.
type node struct {
	t     *testing.T
	rt    *state.Runtime
	agent key
	owner key
	cfg   replicate.Config
	rep   *replicate.Replicator
	stop  func()
}

// nodeConfig says what a node runs.
type nodeConfig struct {
	agent, owner key
	dir          replicate.Directory
	relays       []*testRelay
	local        *testRelay // reached in-process instead of over a websocket
	follow       []string
	antiEntropy  time.Duration                       // 0: the default
	wrap         func(replicate.Link) replicate.Link // e.g. a lossy publisher
}

func startNode(t *testing.T, nc nodeConfig) *node {
	t.Helper()
	ctx := context.Background()
	rt, err := state.Open(ctx, state.Options{Dir: t.TempDir(), Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	for capID, raw := range map[string]string{capNote: noteSchema, capTeam: teamSchema, capBoard: boardSchema} {
		if _, err := rt.Register(ctx, capID, []byte(raw)); err != nil {
			t.Fatal(err)
		}
	}
	n := &node{t: t, rt: rt, agent: nc.agent, owner: nc.owner}
	n.cfg = replicate.Config{SecretKey: nc.agent.sk, Owner: nc.owner.pk, Directory: nc.dir, Schemas: rt.Schemas(),
		Follow: nc.follow, AntiEntropyInterval: nc.antiEntropy, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond, Logger: quietLogger(t)}
	for _, tr := range nc.relays {
		ws := replicate.NewWSRelay(tr.URL, nc.agent.sk, quietLogger(t))
		t.Cleanup(func() { ws.Close() })
		l := replicate.WSLink(ws)
		if nc.wrap != nil {
			l = nc.wrap(l)
		}
		n.cfg.Links = append(n.cfg.Links, l)
	}
	if nc.local != nil {
		local := &replicate.Local{Relay: nc.local.Relay, Poll: 20 * time.Millisecond}
		n.cfg.Links = append(n.cfg.Links, local.Link("local"))
	}
	n.start()
	t.Cleanup(n.halt)
	return n
}

// start runs a new Replicator over the node's store.
func (n *node) start() {
	n.t.Helper()
	rep, err := replicate.New(n.rt.Store(), n.cfg)
	if err != nil {
		n.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep.Run(ctx)
	}()
	n.rep = rep
	n.stop = func() { cancel(); <-done }
}

func (n *node) halt() {
	if n.stop != nil {
		n.stop()
		n.stop = nil
	}
}

// get returns the document's object, or "" if the node does not have it.
func (n *node) get(c state.Caller, uri, id string) string {
	d, err := n.rt.Get(context.Background(), c, uri, id)
	if err != nil {
		var se *state.Error
		if errors.As(err, &se) && se.Code == state.CodeNotFound {
			return ""
		}
		n.t.Fatal(err)
	}
	return string(d.Object)
}

func (n *node) update(c state.Caller, uri, id, patch string) {
	n.t.Helper()
	if _, err := n.rt.Update(context.Background(), c, uri, id, []byte(patch)); err != nil {
		n.t.Errorf("update %s: %v", patch, err)
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, d, what, cond)
}

func object(t *testing.T, raw string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return m
}
