package testrelay_test

import (
	"context"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
)

func TestServe(t *testing.T) {
	url, r := testrelay.Serve(t)
	k := testkit.NewKey(t)
	evt := &nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: "hi", Tags: nostr.Tags{}}
	if err := evt.Sign(k.SK); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := relayclient.Dial(ctx, url, relayclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Publish(ctx, evt); err != nil {
		t.Fatal(err)
	}
	got, err := r.QuerySync(ctx, nostr.Filter{IDs: []string{evt.ID}})
	if err != nil || len(got) != 1 {
		t.Fatalf("QuerySync in-process = %d events, %v; want the event published over the websocket", len(got), err)
	}
}
