package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/agentnode/agentnode/relay"
)

// testNode is a real relay served over a real websocket for one test.
type testNode struct {
	*relay.Relay
	URL string // ws://...
}

func openTestNode(t *testing.T, limits relay.Limits) *testNode {
	t.Helper()
	url, r := testrelay.Serve(t, relay.Config{Limits: limits, Version: "test"})
	return &testNode{Relay: r, URL: url}
}

// result is what one in-process run of the CLI produced.
type result struct {
	stdout, stderr string
	err            error
}

// cli runs agentnode in-process with env as its whole environment.
func cli(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := m.Run(ctx, args)
	return result{out.String(), errb.String(), err}
}

// run runs agentnode against the node, signing with sk (may be ""), and
// fails the test on error.
func (n *testNode) run(t *testing.T, sk string, args ...string) string {
	t.Helper()
	r := cli(t, n.env(sk), args...)
	if r.err != nil {
		t.Fatalf("agentnode %s: %v\nstderr: %s", strings.Join(args, " "), r.err, r.stderr)
	}
	return r.stdout
}

// try runs agentnode against the node and returns whatever happened.
func (n *testNode) try(t *testing.T, sk string, args ...string) result {
	t.Helper()
	return cli(t, n.env(sk), args...)
}

func (n *testNode) env(sk string) map[string]string {
	return map[string]string{"AGENTNODE_RELAY": n.URL, "AGENTNODE_KEY": sk}
}

// query reads the relay's store directly.
func (n *testNode) query(t *testing.T, f nostr.Filter) []*nostr.Event {
	t.Helper()
	evts, err := n.QuerySync(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return evts
}

// publishDirect stores a signed event through the relay's in-process API.
func (n *testNode) publishDirect(t *testing.T, evt *nostr.Event) {
	t.Helper()
	if err := n.Publish(context.Background(), evt); err != nil {
		t.Fatalf("publish kind %d: %v", evt.Kind, err)
	}
}

// signed builds and signs an event of kind with tags and content.
func signed(t *testing.T, sk string, tmpl nostr.Event) *nostr.Event {
	t.Helper()
	evt := tmpl
	if evt.CreatedAt == 0 {
		evt.CreatedAt = nostr.Now()
	}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return &evt
}

// decodeJSON unmarshals the CLI's --json output into v.
func decodeJSON(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
}

// publishedEvent decodes a write command's --json output (the signed event).
func publishedEvent(t *testing.T, out string) *nostr.Event {
	t.Helper()
	var evt nostr.Event
	decodeJSON(t, out, &evt)
	if ok, err := evt.CheckSignature(); !ok || err != nil {
		t.Fatalf("published event has a bad signature: %v", err)
	}
	return &evt
}

// tagValues returns the values of every tag named name.
func tagValues(evt *nostr.Event, name string) []string {
	var out []string
	for _, tag := range evt.Tags {
		if len(tag) >= 2 && tag[0] == name {
			out = append(out, tag[1])
		}
	}
	return out
}

// eventFilter matches one event by id.
func eventFilter(id string) nostr.Filter { return nostr.Filter{IDs: []string{id}} }

// runDaemon runs d's loop until the returned stop, which waits for it.
func runDaemon(d *agentd.Daemon) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}
