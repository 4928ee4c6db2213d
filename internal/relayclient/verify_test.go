package relayclient_test

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fiatjaf/khatru"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
)

// servingAnything is a khatru relay that serves evts, signed or not, to
// any REQ (khatru checks what clients send, never what it serves).
func servingAnything(t *testing.T, evts ...*nostr.Event) string {
	t.Helper()
	rl := khatru.NewRelay()
	rl.Log = log.New(io.Discard, "", 0)
	rl.QueryEvents = append(rl.QueryEvents, func(context.Context, nostr.Filter) (chan *nostr.Event, error) {
		ch := make(chan *nostr.Event, len(evts))
		for _, e := range evts {
			ch <- e
		}
		close(ch)
		return ch, nil
	})
	srv := httptest.NewServer(rl)
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// With Verify, a forged signature, an id that is not the event's hash and
// an event the filter did not ask for are dropped; without it, all come.
func TestConn_Verify(t *testing.T) {
	k := testkit.NewKey(t)
	good := note(t, k, "good")
	forged := note(t, k, "forged")
	forged.Content = "tampered" // the signature no longer covers it
	squat := note(t, k, "squat")
	squat.ID = good.ID[:60] + "0000"
	other := note(t, k, "another kind")
	other.Kind = 7
	if err := other.Sign(k.SK); err != nil {
		t.Fatal(err)
	}
	url := servingAnything(t, good, forged, squat, other)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		verify bool
		want   int
	}{{true, 1}, {false, 4}} {
		conn, err := relayclient.Dial(ctx, url, relayclient.Options{Verify: tc.verify})
		if err != nil {
			t.Fatal(err)
		}
		got, err := conn.Query(ctx, nostr.Filters{{Kinds: []int{1}}})
		conn.Close()
		if err != nil || len(got) != tc.want {
			t.Errorf("Verify %v: %d events, %v; want %d", tc.verify, len(got), err, tc.want)
		}
		if tc.verify && len(got) == 1 && got[0].ID != good.ID {
			t.Errorf("Verify kept %s, want the genuine event", got[0].Content)
		}
	}
}
