package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay"
	"github.com/agentnode/agentnode/relay/negsync"
)

// seedData stores n notes in a fresh data directory (closed afterwards,
// as `sync` wants it).
func seedData(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	r, err := relay.Open(context.Background(), relay.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	sk := nostr.GeneratePrivateKey()
	for i := range n {
		evt := &nostr.Event{Kind: 1, CreatedAt: nostr.Now() - nostr.Timestamp(i), Content: "local " + strings.Repeat("x", i)}
		evt.Sign(sk)
		if err := r.Publish(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.Close(ctx)
	return dir
}

func TestSync_bothWaysWithARelay(t *testing.T) {
	remote := openTestNode(t, relay.Limits{})
	sk := nostr.GeneratePrivateKey()
	for i := range 7 {
		evt := &nostr.Event{Kind: 1, CreatedAt: nostr.Now() - nostr.Timestamp(i), Content: "remote " + strings.Repeat("y", i)}
		evt.Sign(sk)
		if err := remote.Publish(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
	}
	data := seedData(t, 5)
	out := cli(t, nil, "sync", remote.URL, "--data", data, "--dir", "both", "--filter", `{"kinds":[1]}`, "--json")
	if out.err != nil {
		t.Fatalf("sync: %v\n%s", out.err, out.stderr)
	}
	var res negsync.Result
	if err := json.Unmarshal([]byte(out.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Local != 5 || res.Downloaded != 7 || res.Uploaded != 5 || res.BytesIn == 0 {
		t.Fatalf("sync: %+v", res)
	}
	if n, _ := remote.Count(context.Background(), nostr.Filter{Kinds: []int{1}}); n != 12 {
		t.Fatalf("the remote holds %d notes, want 12", n)
	}
	out = cli(t, nil, "sync", remote.URL, "--data", data, "--json")
	json.Unmarshal([]byte(out.stdout), &res)
	if out.err != nil || res.Local != 12 || res.OnlyHere+res.OnlyThere != 0 {
		t.Fatalf("second sync: %+v %v", res, out.err)
	}
}

func TestSync_usageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"sync"}, {"sync", "ws://x", "--dir", "sideways"}, {"sync", "ws://x", "--filter", "{"},
	} {
		if r := cli(t, nil, args...); r.err == nil || !errors.As(r.err, new(*usageError)) {
			t.Errorf("%v: %v, want a usage error", args, r.err)
		}
	}
}
