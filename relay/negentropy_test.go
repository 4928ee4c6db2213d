package relay

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip77"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy/storage/empty"
)

// seedKind1 publishes n kind-1 notes of one fresh key and returns their ids.
func seedKind1(t *testing.T, c *nostr.Relay, n int, content string) []string {
	t.Helper()
	sk := nostr.GeneratePrivateKey()
	ids := make([]string, 0, n)
	for i := range n {
		evt := signed(t, sk, 1, nil, content+" "+string(rune('a'+i%26))+strings.Repeat("!", i))
		mustPublish(t, c, evt)
		ids = append(ids, evt.ID)
	}
	return ids
}

// sortedIDsOf is the events' ids, sorted.
func sortedIDsOf(evts []*nostr.Event) []string {
	out := make([]string, 0, len(evts))
	for _, e := range evts {
		out = append(out, e.ID)
	}
	slices.Sort(out)
	return out
}

// TestNegentropy_goNostrClientReconciles runs go-nostr's own NIP-77 client
// (nip77.NegentropySync, both directions, and FetchIDsOnly) against the
// relay: afterwards both sides hold the union.
func TestNegentropy_goNostrClientReconciles(t *testing.T) {
	a, b := openTestRelay(t, t.TempDir(), Limits{}), openTestRelay(t, t.TempDir(), Limits{})
	ca, cb := a.connect(t), b.connect(t)
	onA := seedKind1(t, ca, 40, "on a")
	onB := seedKind1(t, cb, 25, "on b")
	all := append(slices.Clone(onA), onB...)
	slices.Sort(all)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ch, err := nip77.FetchIDsOnly(ctx, a.URL, nostr.Filter{Kinds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for id := range ch {
		got = append(got, id)
	}
	slices.Sort(got)
	if want := slices.Sorted(slices.Values(onA)); !slices.Equal(got, want) {
		t.Fatalf("FetchIDsOnly: %d ids, want %d", len(got), len(want))
	}

	if err := nip77.NegentropySync(ctx, cb, a.URL, nostr.Filter{Kinds: []int{1}}, nip77.Both); err != nil {
		t.Fatal(err)
	}
	f := nostr.Filter{Kinds: []int{1}, Limit: 1000}
	pollUntil(t, func() bool {
		return slices.Equal(sortedIDsOf(queryWS(t, ca, f)), all) && slices.Equal(sortedIDsOf(queryWS(t, cb, f)), all)
	}, "both relays hold the union")
}

// pollUntil waits (up to 20 s) for cond.
func pollUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// negConn is a raw websocket speaking NIP-77 frame by frame.
type negConn struct {
	t    *testing.T
	conn *websocket.Conn
}

func dialNeg(t *testing.T, url string) *negConn {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &negConn{t: t, conn: conn}
}

func (c *negConn) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	if err := c.conn.WriteMessage(websocket.TextMessage, b); err != nil {
		c.t.Fatal(err)
	}
}

// open sends NEG-OPEN with a client's first message over no items.
func (c *negConn) open(id string, f nostr.Filter) {
	c.send([]any{"NEG-OPEN", id, f, negentropy.New(empty.Empty{}, 0).Start()})
}

// answer reads frames until a NEG-MSG or NEG-ERR for id: its label and payload.
func (c *negConn) answer(id string) (label, payload string) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		_, data, err := c.conn.ReadMessage()
		if err != nil {
			c.t.Fatalf("no answer for %s: %v", id, err)
		}
		var msg []string
		if json.Unmarshal(data, &msg) == nil && len(msg) == 3 && msg[1] == id &&
			(msg[0] == "NEG-MSG" || msg[0] == "NEG-ERR") {
			return msg[0], msg[2]
		}
	}
}

func (c *negConn) wantErr(id, prefix string) string {
	c.t.Helper()
	label, reason := c.answer(id)
	if label != "NEG-ERR" || !strings.HasPrefix(reason, prefix) {
		c.t.Fatalf("%s: got %s %q, want NEG-ERR %q…", id, label, reason, prefix)
	}
	return reason
}

func (c *negConn) wantMsg(id string) {
	c.t.Helper()
	if label, payload := c.answer(id); label != "NEG-MSG" {
		c.t.Fatalf("%s: got %s %q, want NEG-MSG", id, label, payload)
	}
}

// TestNegentropy_sessionsAreBounded: sessions per connection, events per
// session and events held relay-wide are capped with a NEG-ERR saying so;
// closing, the idle timeout and hanging up each give the items back.
func TestNegentropy_sessionsAreBounded(t *testing.T) {
	tr := openTestRelayConfig(t, Config{DataDir: t.TempDir(), Version: "test",
		Negentropy: NegentropyLimits{MaxSessions: 2, MaxItems: 10, MaxHeldItems: 15, IdleTimeout: 300 * time.Millisecond}})
	seedKind1(t, tr.connect(t), 12, "n")
	rl := tr.khatru.Relay

	c := dialNeg(t, tr.URL)
	c.open("big", nostr.Filter{Kinds: []int{1}})
	c.wantErr("big", "blocked: more than 10 events match")
	c.open("s1", nostr.Filter{Kinds: []int{1}, Limit: 8})
	c.wantMsg("s1")
	if got := rl.NegentropyHeld(); got != 8 {
		t.Fatalf("held %d items, want 8", got)
	}
	c2 := dialNeg(t, tr.URL)
	c2.open("x", nostr.Filter{Kinds: []int{1}})
	c2.wantErr("x", "rate-limited: the relay is busy")
	c.open("s2", nostr.Filter{Kinds: []int{1}, Limit: 2})
	c.wantMsg("s2")
	c.open("s3", nostr.Filter{Kinds: []int{1}, Limit: 1})
	c.wantErr("s3", "blocked: too many open negentropy sessions")
	c.send([]any{"NEG-CLOSE", "s2"})
	pollUntil(t, func() bool { return rl.NegentropyHeld() == 8 }, "NEG-CLOSE gives 2 items back")
	pollUntil(t, func() bool { return rl.NegentropyHeld() == 0 }, "the idle timeout closes s1")
	c.send([]any{"NEG-MSG", "s1", "61"})
	c.wantErr("s1", "closed:")

	c2.open("y", nostr.Filter{Kinds: []int{1}, Limit: 5})
	c2.wantMsg("y")
	c2.conn.Close()
	pollUntil(t, func() bool { return rl.NegentropyHeld() == 0 }, "hanging up gives the items back")
}

// TestNegentropy_restrictedEventsStayHidden: NIP-77 reveals no id of a
// restricted kind to a connection that may not read it, and a filter
// naming the kind asks for AUTH as a REQ does.
func TestNegentropy_restrictedEventsStayHidden(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	c := tr.connect(t)
	pub := seedKind1(t, c, 3, "public")
	sk := nostr.GeneratePrivateKey()
	reader := nostr.GeneratePrivateKey()
	rp, _ := nostr.GetPublicKey(reader)
	mustPublish(t, c, signed(t, sk, 4290, nostr.Tags{{"p", rp}}, "private op"))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ch, err := nip77.FetchIDsOnly(ctx, tr.URL, nostr.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for id := range ch {
		got = append(got, id)
	}
	slices.Sort(got)
	if want := slices.Sorted(slices.Values(pub)); !slices.Equal(got, want) {
		t.Fatalf("ids %v, want only the public %v", got, want)
	}
	raw := dialNeg(t, tr.URL)
	raw.open("r", nostr.Filter{Kinds: []int{4290}})
	raw.wantErr("r", "auth-required:")
}

// TestNegentropy_badInputIsRefused: malformed negentropy payloads and
// search filters get NEG-ERR with a reason; the connection stays usable.
func TestNegentropy_badInputIsRefused(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	c := dialNeg(t, tr.URL)
	c.send([]any{"NEG-OPEN", "bad", nostr.Filter{}, "61zz"})
	c.wantErr("bad", "invalid:")
	c.send([]any{"NEG-OPEN", "s", nostr.Filter{Search: "x"}, negentropy.New(empty.Empty{}, 0).Start()})
	c.wantErr("s", "blocked: search filters")
	c.open("ok", nostr.Filter{})
	c.wantMsg("ok")
	c.send([]any{"NEG-MSG", "ok", "6101"})
	c.wantErr("ok", "invalid:")
}

// TestNegentropy_closeThenReopenSameID: a NEG-CLOSE followed at once by a
// NEG-OPEN of the same id (a client running a second reconciliation on one
// connection) leaves the new session open: the late NEG-CLOSE must not end
// it (khatru PATCHES.md 18). A NEG-MSG of garbage to an open session is
// "invalid:"; to a closed one it would be "closed:".
func TestNegentropy_closeThenReopenSameID(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	c := dialNeg(t, tr.URL)
	for i := range 100 {
		c.send([]any{"NEG-CLOSE", "N"})
		c.open("N", nostr.Filter{})
		c.wantMsg("N")
		c.send([]any{"NEG-MSG", "N", "6101"})
		if label, reason := c.answer("N"); label != "NEG-ERR" || !strings.HasPrefix(reason, "invalid:") {
			t.Fatalf("round %d: the reopened session was not open: %s %q", i, label, reason)
		}
	}
}
