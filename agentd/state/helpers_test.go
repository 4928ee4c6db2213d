package state_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/state"
)

const (
	capNote = "did:nuwa:cap:note@1.0.0"
	noteURI = "did:nuwa:state:note#v1"
	capCard = "did:nuwa:cap:card@1.0.0"
	cardURI = "did:nuwa:state:card#v1"
	owner1  = "o1"
	agentA1 = "a1"
	agentA2 = "a2"
	owner2  = "o2"
	agentB1 = "b1"
)

// noteSchema is the ACP spec's example schema.
const noteSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "did:nuwa:state:note#v1",
  "type": "object",
  "properties": {
    "id": {"type": "string", "format": "uuid"},
    "title": {"type": "string", "x-crdt": "lww_register"},
    "body": {"type": "string", "x-crdt": "rga_text"},
    "source_url": {"type": "string", "format": "uri"},
    "tags": {"type": "array", "items": {"type": "string"}, "x-crdt": "grow_only_set"},
    "createdAt": {"type": "string", "format": "date-time"},
    "updatedAt": {"type": "string", "format": "date-time"}
  },
  "required": ["id", "title", "body", "createdAt", "updatedAt"]
}`

// cardSchema has a field of every CRDT.
const cardSchema = `{
  "$id": "did:nuwa:state:card#v1",
  "type": "object",
  "properties": {
    "title": {"type": "string"},
    "body": {"type": "string", "x-crdt": "rga_text"},
    "tags": {"type": "array", "items": {"type": "string"}, "x-crdt": "grow_only_set"},
    "views": {"type": "integer", "x-crdt": "counter"},
    "pinned": {"type": "boolean", "x-crdt": "flag"},
    "events": {"type": "array", "x-crdt": "log_rga"},
    "steps": {"type": "array", "x-crdt": "rga_list"},
    "meta": {"type": "object", "x-crdt": "or_map"},
    "status": {"type": "string", "x-crdt": "mv_register"},
    "extra": {"type": "object"}
  },
  "required": ["title"],
  "additionalProperties": false
}`

func note(id, title, body string, tags ...string) []byte {
	if tags == nil {
		tags = []string{}
	}
	b, _ := json.Marshal(map[string]any{"id": id, "title": title, "body": body, "tags": tags,
		"createdAt": "2025-05-15T10:00:00Z", "updatedAt": "2025-05-15T10:00:00Z"})
	return b
}

const (
	id1 = "11111111-1111-4111-8111-111111111111"
	id2 = "22222222-2222-4222-8222-222222222222"
	id3 = "33333333-3333-4333-8333-333333333333"
)

// caller is an agent of owner running capability capID with every verb.
func caller(agent, owner, capID string) state.Caller {
	return state.Caller{Agent: agent, Owner: owner, Capability: capID, Scope: "sc:test", Verbs: state.AllVerbs}
}

// clock is a settable fake clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2025, 5, 15, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// openRuntime opens a runtime in dir (a new temp dir if "") with note and
// card registered.
func openRuntime(t testing.TB, dir string, opts state.Options) *state.Runtime {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	opts.Dir = dir
	rt, err := state.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	mustRegister(t, rt, capNote, noteSchema)
	mustRegister(t, rt, capCard, cardSchema)
	return rt
}

func mustRegister(t testing.TB, rt *state.Runtime, capID, raw string) {
	t.Helper()
	if _, err := rt.Register(context.Background(), capID, []byte(raw)); err != nil {
		t.Fatal(err)
	}
}

// object decodes a document's object.
func object(t testing.TB, d *state.Document) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(d.Object, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	var e *state.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("err = %v, want code %s", err, code)
	}
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// requesterOf is c asked for by requester (a stranger to c's owner).
func requesterOf(c state.Caller, requester string) state.Caller {
	c.Requester = requester
	return c
}
