package agentpg_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentnode/agentnode/agentd/agentpg"
	"github.com/agentnode/agentnode/agentd/lease"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/internal/pgtest"
)

const (
	capNote    = "did:nuwa:cap:note@1.0.0"
	noteURI    = "did:nuwa:state:note#v1"
	noteSchema = `{"$id": "did:nuwa:state:note#v1", "type": "object",
	  "properties": {"id": {"type": "string"}, "title": {"type": "string", "x-crdt": "lww_register"},
	    "body": {"type": "string", "x-crdt": "rga_text"}, "tags": {"type": "array", "items": {"type": "string"}, "x-crdt": "grow_only_set"}},
	  "required": ["id", "title"]}`
	agentX = "a1"
	ownerX = "o1"
)

// instance is one agentnode instance's agent side: its own SQLite ASM
// store, a lease manager and the op-log sync, on the shared database.
type instance struct {
	rt    *state.Runtime
	lm    *lease.Manager
	state *agentpg.StateRuntime
	sync  *agentpg.StateSync
}

func newInstance(t testing.TB, url, name string, ttl time.Duration) *instance {
	t.Helper()
	return newInstanceWith(t, url, lease.Config{Instance: name, TTL: ttl})
}

// newInstanceWith is newInstance with its lease manager configured by lc.
func newInstanceWith(t testing.TB, url string, lc lease.Config) *instance {
	t.Helper()
	ctx := context.Background()
	rt, err := state.Open(ctx, state.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	lm, err := lease.Open(ctx, url, lc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lm.Close)
	register := func(ctx context.Context, capID string, raw []byte) error {
		_, err := rt.Register(ctx, capID, raw)
		return err
	}
	sync := openDB(t, url).NewStateSync(rt.Store(), string(rt.Store().Replica()), register, lm.Holds, nil)
	return &instance{rt: rt, lm: lm, sync: sync, state: &agentpg.StateRuntime{Inner: rt, Sync: sync}}
}

var callerX = state.CallerFromACP(agentX, ownerX, capNote, "sc:note", state.AllVerbs)

func (in *instance) call(t *testing.T, tool, args string) (json.RawMessage, error) {
	t.Helper()
	return in.state.CallTool(context.Background(), callerX, tool, json.RawMessage(args))
}

func (in *instance) get(t *testing.T, id string) (map[string]any, error) {
	t.Helper()
	out, err := in.rt.CallTool(context.Background(), callerX, state.ToolGet, json.RawMessage(fmt.Sprintf(`{"schema_uri":%q,"id":%q}`, noteURI, id)))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Object map[string]any `json:"object"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Object, nil
}

func createArgs(id, title string) string {
	return fmt.Sprintf(`{"schema_uri":%q,"object":{"id":%q,"title":%q,"body":"hello","tags":["x"]}}`, noteURI, id, title)
}

// TestStateSync_takeover: the agent's state written on instance a is whole
// on b after b takes the lease over; a, stale, can no longer make a write
// durable; b's own writes go on from there.
func TestStateSync_takeover(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a := newInstance(t, url, "a", time.Minute)
	b := newInstance(t, url, "b", time.Minute)
	if _, err := a.state.Register(ctx, capNote, []byte(noteSchema)); err != nil {
		t.Fatal(err)
	}
	a.lm.Add(ctx, agentX)
	if err := a.lm.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"n1", "n2"} {
		if _, err := a.call(t, state.ToolCreate, createArgs(id, fmt.Sprint("title ", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.call(t, state.ToolUpdate, fmt.Sprintf(`{"schema_uri":%q,"id":"n1","patch":[{"op":"replace","path":"/title","value":"edited"}]}`, noteURI)); err != nil {
		t.Fatal(err)
	}

	// b's refused while a holds it; then a stops renewing (dies).
	if _, err := b.call(t, state.ToolCreate, createArgs("nb", "b")); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("b writing a's agent: %v, want ErrLost", err)
	}
	expireLeases(t, url, "a")
	takeLease(t, b.lm, agentX)
	if _, err := b.sync.Takeover(ctx, agentX); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"n1", "n2"} {
		want, _ := a.get(t, id)
		got, err := b.get(t, id)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s on b: %v (%v), want %v", id, got, err, want)
		}
	}

	// a still believes it holds the lease (it has not ticked): its write
	// is not durable and says so.
	if _, err := a.call(t, state.ToolCreate, createArgs("stale", "s")); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("stale write: %v, want ErrLost", err)
	}
	if _, err := b.call(t, state.ToolUpdate, fmt.Sprintf(`{"schema_uri":%q,"id":"n2","patch":[{"op":"replace","path":"/title","value":"by b"}]}`, noteURI)); err != nil {
		t.Fatal(err)
	}

	// A third instance replaying from the op log sees b's write, not a's
	// stale one.
	c := newInstance(t, url, "c", time.Minute)
	if _, err := c.sync.Takeover(ctx, agentX); err != nil {
		t.Fatal(err)
	}
	if got, err := c.get(t, "n2"); err != nil || got["title"] != "by b" {
		t.Errorf("n2 on c: %v (%v), want title \"by b\"", got, err)
	}
	if got, err := c.get(t, "n1"); err != nil || got["title"] != "edited" {
		t.Errorf("n1 on c: %v (%v), want title \"edited\"", got, err)
	}
	if _, err := c.get(t, "stale"); err == nil {
		t.Error("the stale holder's write reached the op log")
	}
}

// expireLeases makes holder's leases expire now by the database's clock,
// which decides expiry: holder died a TTL ago, without the test waiting
// out a TTL short enough to race a busy CPU.
func expireLeases(t *testing.T, url, holder string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE agent_leases SET expires_at = now() - interval '1 millisecond' WHERE holder = $1`, holder); err != nil {
		t.Fatal(err)
	}
}

// takeLease ticks m until it holds agent (the previous holder's lease
// must expire first).
func takeLease(t *testing.T, m *lease.Manager, agent string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if err := m.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, ok := m.Holds(agent); ok {
			return
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
	}
	t.Fatalf("%s never held %s", m.Instance(), agent)
}

// TestStateSync_takeoverResumes: a second takeover by the same instance
// replays only what was appended since the first, and misses nothing.
func TestStateSync_takeoverResumes(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a := newInstance(t, url, "a", time.Hour)
	b := newInstance(t, url, "b", time.Hour)
	a.state.Register(ctx, capNote, []byte(noteSchema))
	a.lm.Add(ctx, agentX)
	a.lm.Tick(ctx)
	a.call(t, state.ToolCreate, createArgs("n1", "one"))
	first, err := b.sync.Takeover(ctx, agentX)
	if err != nil || first == 0 {
		t.Fatalf("first takeover applied %d ops, %v", first, err)
	}
	if _, err := a.call(t, state.ToolCreate, createArgs("n2", "two")); err != nil {
		t.Fatal(err)
	}
	second, err := b.sync.Takeover(ctx, agentX)
	if err != nil || second == 0 {
		t.Fatalf("second takeover applied %d ops, %v", second, err)
	}
	if got, err := b.get(t, "n2"); err != nil || got["title"] != "two" {
		t.Errorf("n2 on b: %v, %v", got, err)
	}
	if n, err := b.sync.Takeover(ctx, agentX); err != nil || n != 0 {
		t.Errorf("third takeover with nothing new applied %d ops, %v", n, err)
	}
}

// TestStateSync_dropsOpsOfAgentsNotHeld: ops logged for an agent this
// instance does not hold (a call that began before the lease was lost)
// are not appended by whichever Flush finds them, and Dropped says so,
// which is what fails that call.
func TestStateSync_dropsOpsOfAgentsNotHeld(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a := newInstance(t, url, "a", time.Hour)
	a.state.Register(ctx, capNote, []byte(noteSchema))
	a.lm.Add(ctx, agentX)
	a.lm.Tick(ctx)
	other := state.CallerFromACP("a2", ownerX, capNote, "sc:note", state.AllVerbs)
	if _, err := a.rt.CallTool(ctx, other, state.ToolCreate, []byte(createArgs("o1", "not held"))); err != nil {
		t.Fatal(err)
	}
	if _, err := a.call(t, state.ToolCreate, createArgs("n1", "held")); err != nil {
		t.Fatalf("the held agent's call: %v", err)
	}
	if n := a.sync.Dropped("a2"); n == 0 {
		t.Error("Dropped(a2) = 0: the ops of the agent not held were not reported")
	}
	if n := a.sync.Dropped(agentX); n != 0 {
		t.Errorf("Dropped(%s) = %d, want 0", agentX, n)
	}
	c := newInstance(t, url, "c", time.Hour)
	if _, err := c.sync.Takeover(ctx, "a2"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.rt.CallTool(ctx, other, state.ToolGet, []byte(fmt.Sprintf(`{"schema_uri":%q,"id":"o1"}`, noteURI))); err == nil {
		t.Error("the op of the agent not held reached the op log")
	}
}
