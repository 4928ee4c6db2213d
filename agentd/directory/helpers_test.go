package directory_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/agentnode/agentnode/relay"
	"github.com/nbd-wtf/go-nostr"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// clock is an injected clock tests move by hand.
type clock = testkit.Clock

func newClock() *clock { return testkit.NewClock(time.Now().Truncate(time.Second)) }

// startDir runs a directory over rel with clk (and cfg's other fields)
// for the rest of the test; it returns once the directory has loaded.
func startDir(t testing.TB, rel *relay.Relay, clk *clock, cfg directory.Config) *directory.Directory {
	t.Helper()
	cfg.Source, cfg.Now, cfg.Logger = rel, clk.Now, quiet
	d := directory.New(cfg)
	testkit.Run(t, "directory", d.Run, d.Ready())
	return d
}

// testEnv is a relay and a clock.
type testEnv struct {
	rel *relay.Relay
	clk *clock
}

func newEnv(t testing.TB) testEnv { return testEnv{rel: testrelay.Open(t), clk: newClock()} }

// key is a test identity.
type key = testkit.Key

// publish signs tmpl with k at created_at and publishes it to rel.
func publish(t testing.TB, rel *relay.Relay, k key, at time.Time, tmpl nostr.Event) *nostr.Event {
	t.Helper()
	tmpl.CreatedAt = nostr.Timestamp(at.Unix())
	if err := tmpl.Sign(k.SK); err != nil {
		t.Fatal(err)
	}
	if err := rel.Publish(context.Background(), &tmpl); err != nil {
		t.Fatalf("publish kind %d: %v", tmpl.Kind, err)
	}
	return &tmpl
}

// botProfile publishes agent's kind 0 naming owner and def (either may be "").
func botProfile(t testing.TB, rel *relay.Relay, agent key, at time.Time, name, owner, def string) {
	t.Helper()
	p := &events.Profile{Bot: true, Name: name, Owner: owner, DefinitionID: def}
	publish(t, rel, agent, at, p.Template())
}

// claims publishes owner's kind 14199 listing agents.
func claims(t testing.TB, rel *relay.Relay, owner key, at time.Time, agents ...string) {
	t.Helper()
	c := &events.OwnerClaims{Agents: agents}
	publish(t, rel, owner, at, c.Template())
}

// beat publishes agent's heartbeat at clk's time.
func beat(t testing.TB, rel *relay.Relay, agent key, at time.Time, s directory.Status) *nostr.Event {
	t.Helper()
	evt, err := directory.BuildHeartbeat(agent.SK, s, at, 3*directory.DefaultHeartbeatInterval)
	if err != nil {
		t.Fatal(err)
	}
	if err := rel.Publish(context.Background(), evt); err != nil {
		t.Fatalf("publish heartbeat: %v", err)
	}
	return evt
}

// within bounds every wait of the package's tests.
const within = 5 * time.Second

// agentWhere polls until d lists id and ok(agent) holds, and returns it.
func agentWhere(t testing.TB, d *directory.Directory, id, what string, ok func(directory.Agent) bool) directory.Agent {
	t.Helper()
	var a directory.Agent
	testkit.WaitFor(t, within, what, func() bool {
		var found bool
		a, found = d.Get(id)
		return found && ok(a)
	})
	return a
}

// ids returns the agents' ids in order.
func ids(agents []directory.Agent) []string {
	out := make([]string, len(agents))
	for i, a := range agents {
		out[i] = a.ID
	}
	return out
}

func ptr[T any](v T) *T { return &v }
