package khatru

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip45/hyperloglog"
)

// Tests of the hooks this copy adds (PATCHES.md, 15 and 16), through a
// real websocket read frame by frame, in order.

// wsConn is a raw client: frames are read in the order the relay wrote them.
type wsConn struct {
	t *testing.T
	c *websocket.Conn
}

// serve serves rl until the test ends.
func serve(t *testing.T, rl *Relay) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(rl)
	t.Cleanup(srv.Close)
	t.Cleanup(rl.Stop)
	return srv
}

func dial(t *testing.T, srv *httptest.Server) *wsConn {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &wsConn{t, c}
}

func (w *wsConn) send(msg ...any) {
	w.t.Helper()
	if err := w.c.WriteJSON(msg); err != nil {
		w.t.Fatal(err)
	}
}

// next reads the next frame as a JSON array (a generous deadline: a busy
// machine must not fail it).
func (w *wsConn) next() []json.RawMessage {
	w.t.Helper()
	w.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var frame []json.RawMessage
	if err := w.c.ReadJSON(&frame); err != nil || len(frame) < 2 {
		w.t.Fatalf("read frame: %v (%d elements)", err, len(frame))
	}
	return frame
}

// expect reads the next frame and checks its label and, when given, its
// second element.
func (w *wsConn) expect(label, second string) []json.RawMessage {
	w.t.Helper()
	frame := w.next()
	var l, s string
	json.Unmarshal(frame[0], &l)
	json.Unmarshal(frame[1], &s)
	if l != label || (second != "" && s != second) {
		w.t.Fatalf("frame %s, want [%q, %q, ...]", joinRaw(frame), label, second)
	}
	return frame
}

func joinRaw(frame []json.RawMessage) string {
	b, _ := json.Marshal(frame)
	return string(b)
}

func signedNote(t *testing.T, content string) *nostr.Event {
	t.Helper()
	evt := &nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: content}
	if err := evt.Sign(nostr.GeneratePrivateKey()); err != nil {
		t.Fatal(err)
	}
	return evt
}

// TestStoreAnnounces_khatruAnnouncesNothing: a store hook that announces
// what it stores (as the relay's writer does, in commit order) gets each
// event to a subscriber once and no OnEventSaved call when StoreAnnounces
// is set; without it, khatru announces the event a second time.
func TestStoreAnnounces_khatruAnnouncesNothing(t *testing.T) {
	for _, tc := range []struct {
		announces bool
		copies    int
		saved     int64
	}{{true, 1, 0}, {false, 2, 2}} {
		rl := NewRelay()
		rl.StoreAnnounces = tc.announces
		rl.StoreEvent = append(rl.StoreEvent, func(_ context.Context, evt *nostr.Event) error {
			rl.BroadcastEvent(evt) // the store's own announcement
			return nil
		})
		var saved atomic.Int64
		rl.OnEventSaved = append(rl.OnEventSaved, func(context.Context, *nostr.Event) { saved.Add(1) })
		srv := serve(t, rl)
		sub, pub := dial(t, srv), dial(t, srv)
		sub.send("REQ", "live", nostr.Filter{Kinds: []int{1}})
		sub.expect("EOSE", "live")
		evt, marker := signedNote(t, "stored"), signedNote(t, "marker")
		for _, e := range []*nostr.Event{evt, marker} {
			pub.send("EVENT", e)
			if ok := pub.expect("OK", e.ID); string(ok[2]) != "true" {
				t.Fatalf("announces=%v: OK %s", tc.announces, joinRaw(ok))
			}
		}
		for range tc.copies {
			sub.expect("EVENT", "live")
		}
		if got := sub.expect("EVENT", "live"); !strings.Contains(string(got[2]), marker.ID) {
			t.Fatalf("announces=%v: %s after %d copies of the event, want the marker", tc.announces, joinRaw(got), tc.copies)
		}
		if got := saved.Load(); got != tc.saved {
			t.Fatalf("announces=%v: OnEventSaved ran %d times, want %d", tc.announces, got, tc.saved)
		}
	}
}

// TestStoreAnnounces_addEventSkipsTheBroadcast: AddEvent (the relay's
// in-process publish) reports skipBroadcast for an event the store hooks
// announced.
func TestStoreAnnounces_addEventSkipsTheBroadcast(t *testing.T) {
	rl := NewRelay()
	t.Cleanup(rl.Stop)
	rl.StoreAnnounces = true
	rl.StoreEvent = append(rl.StoreEvent, func(context.Context, *nostr.Event) error { return nil })
	skip, err := rl.AddEvent(context.Background(), signedNote(t, "in process"))
	if err != nil || !skip {
		t.Fatalf("AddEvent = %v, %v; want skipBroadcast and no error", skip, err)
	}
}

// TestCount_HyperLogLogOffsetHook: the hook decides whether a COUNT gets
// a HyperLogLog and at which offset; nil is go-nostr's choice.
func TestCount_HyperLogLogOffsetHook(t *testing.T) {
	target := strings.Repeat("ab", 32)
	reaction := nostr.Filter{Kinds: []int{7}, Tags: nostr.TagMap{"e": {target}}}
	short := nostr.Filter{Kinds: []int{3}, Tags: nostr.TagMap{"p": {"x"}}}
	for _, tc := range []struct {
		name   string
		hook   func(nostr.Filter) int
		filter nostr.Filter
		offset int // -1: CountEvents, no HyperLogLog
	}{
		{"nil hook, reaction count", nil, reaction, 18}, // 'a' (10) + 8: go-nostr's rule
		{"nil hook, short value", nil, short, -1},
		{"hook refuses", func(nostr.Filter) int { return -1 }, reaction, -1},
		{"hook picks", func(nostr.Filter) int { return 9 }, short, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rl := NewRelay()
			rl.HyperLogLogOffset = tc.hook
			var gotOffset atomic.Int64
			gotOffset.Store(-1)
			rl.CountEvents = append(rl.CountEvents, func(context.Context, nostr.Filter) (int64, error) { return 3, nil })
			rl.CountEventsHLL = append(rl.CountEventsHLL, func(_ context.Context, _ nostr.Filter, offset int) (int64, *hyperloglog.HyperLogLog, error) {
				gotOffset.Store(int64(offset))
				hll := hyperloglog.New(offset)
				hll.Add(strings.Repeat("cd", 32))
				return 4, hll, nil
			})
			c := dial(t, serve(t, rl))
			c.send("COUNT", "n", tc.filter)
			frame := c.expect("COUNT", "n")
			var body struct {
				Count int64  `json:"count"`
				HLL   string `json:"hll"`
			}
			if err := json.Unmarshal(frame[2], &body); err != nil {
				t.Fatal(err)
			}
			wantCount, wantHLL := int64(3), false
			if tc.offset != -1 {
				wantCount, wantHLL = 4, true
			}
			if got := int(gotOffset.Load()); got != tc.offset || body.Count != wantCount || (body.HLL != "") != wantHLL {
				t.Fatalf("offset %d, count %d, hll %q; want offset %d, count %d, hll %v",
					got, body.Count, body.HLL, tc.offset, wantCount, wantHLL)
			}
		})
	}
}
