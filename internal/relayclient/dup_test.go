package relayclient_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	ws "github.com/coder/websocket"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
)

// twiceRelay is a scripted relay speaking NIP-01 that answers every REQ
// with each of evts twice, then EOSE: what a relay does when an event
// committed while the query runs reaches the subscription stored and live.
func twiceRelay(t *testing.T, evts ...*nostr.Event) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := ws.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, msg, err := c.Read(r.Context())
			if err != nil {
				return
			}
			var req []json.RawMessage
			if json.Unmarshal(msg, &req) != nil || len(req) < 2 || string(req[0]) != `"REQ"` {
				continue
			}
			var id string
			_ = json.Unmarshal(req[1], &id)
			for _, evt := range evts {
				for range 2 {
					b, _ := json.Marshal([]any{"EVENT", id, evt})
					if c.Write(r.Context(), ws.MessageText, b) != nil {
						return
					}
				}
			}
			b, _ := json.Marshal([]any{"EOSE", id})
			if c.Write(r.Context(), ws.MessageText, b) != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func TestQuery_eachEventOnce(t *testing.T) {
	k := testkit.NewKey(t)
	var evts []*nostr.Event
	for i := range 3 {
		evt := &nostr.Event{Kind: 1, CreatedAt: nostr.Timestamp(1700000000 + i), Content: "note", Tags: nostr.Tags{}}
		if err := evt.Sign(k.SK); err != nil {
			t.Fatal(err)
		}
		evts = append(evts, evt)
	}
	url := twiceRelay(t, evts...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := relayclient.Dial(ctx, url, relayclient.Options{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got, err := conn.Query(ctx, nostr.Filters{{Kinds: []int{1}}})
	if err != nil || len(got) != len(evts) {
		t.Fatalf("Conn.Query: %d events, %v; want each of the %d once", len(got), err, len(evts))
	}
	r := relayclient.New(url, k.SK, nil)
	defer r.Close()
	got, err = r.Query(ctx, nostr.Filter{Kinds: []int{1}})
	if err != nil || len(got) != len(evts) {
		t.Fatalf("Relay.Query: %d events, %v; want each of the %d once", len(got), err, len(evts))
	}
	for i, evt := range got {
		if evt.ID != evts[i].ID {
			t.Fatalf("event %d is %s, want %s (the relay's order)", i, evt.ID, evts[i].ID)
		}
	}
}
