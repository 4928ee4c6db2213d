package peers_test

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fiatjaf/khatru"
	"github.com/nbd-wtf/go-nostr"
)

// fakePeer is a khatru relay that serves whatever it is given, signed or
// not: khatru checks what clients send, never what it serves.
type fakePeer struct {
	URL string
	rl  *khatru.Relay
}

func openFakePeer(tb testing.TB, served ...*nostr.Event) *fakePeer {
	tb.Helper()
	rl := khatru.NewRelay()
	rl.Log = log.New(io.Discard, "", 0)
	rl.QueryEvents = append(rl.QueryEvents, func(_ context.Context, f nostr.Filter) (chan *nostr.Event, error) {
		ch := make(chan *nostr.Event, len(served))
		for _, evt := range served {
			if f.Matches(evt) {
				ch <- evt
			}
		}
		close(ch)
		return ch, nil
	})
	srv := httptest.NewServer(rl)
	tb.Cleanup(srv.Close)
	return &fakePeer{URL: "ws" + strings.TrimPrefix(srv.URL, "http"), rl: rl}
}

// broadcast sends evts to the live subscribers.
func (f *fakePeer) broadcast(evts ...*nostr.Event) {
	for _, evt := range evts {
		f.rl.BroadcastEvent(evt)
	}
}
