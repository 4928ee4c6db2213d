package agentd_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/lessons"
	"github.com/agentnode/agentnode/relay"
)

// The embedded relay is the daemon's Store and Notifier.
var (
	_ agentd.Store    = (*relay.Relay)(nil)
	_ agentd.Notifier = (*relay.Relay)(nil)
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// key is a keypair.
type key = testkit.Key

// node is a real relay and a daemon over one data directory.
type node struct {
	t   testing.TB
	dir string
	r   *relay.Relay
	d   *agentd.Daemon
	cfg agentd.Config
	// stopRun ends d's Run (runDaemon) and waits for it.
	stopRun func()
	clock   nostr.Timestamp // created_at of test events: strictly increasing, in the past
}

// openNode opens a relay and a daemon in a fresh data directory; cfg's
// DataDir, Store, Notifier and Logger are filled in.
func openNode(t testing.TB, cfg agentd.Config) *node {
	t.Helper()
	n := &node{t: t, dir: t.TempDir(), clock: nostr.Now() - 100_000}
	r, err := relay.Open(context.Background(), relay.Config{DataDir: n.dir, Version: "test", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	n.r = r
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if n.d != nil {
			n.stopRun()
			n.d.Close(ctx)
		}
		r.Close(ctx)
	})
	cfg.DataDir, cfg.Store, cfg.Notifier, cfg.Logger = n.dir, r, r, quiet
	n.cfg = cfg
	n.d = n.openDaemon(cfg)
	return n
}

func (n *node) openDaemon(cfg agentd.Config) *agentd.Daemon {
	n.t.Helper()
	d, err := agentd.Open(context.Background(), cfg)
	if err != nil {
		n.t.Fatal(err)
	}
	n.stopRun = runDaemon(d)
	return d
}

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

// reopen closes the daemon and opens a new one with cfg (DataDir, Store,
// Notifier and Logger kept).
func (n *node) reopen(mod func(*agentd.Config)) (*agentd.Daemon, error) {
	n.t.Helper()
	n.closeDaemon()
	cfg := n.cfg
	if mod != nil {
		mod(&cfg)
	}
	d, err := agentd.Open(context.Background(), cfg)
	n.d = d
	if err == nil {
		n.stopRun = runDaemon(d)
	}
	return d, err
}

func (n *node) closeDaemon() {
	n.t.Helper()
	if n.d == nil {
		return
	}
	n.stopRun()
	if err := n.d.Close(context.Background()); err != nil {
		n.t.Fatal(err)
	}
	n.d = nil
}

// publish stamps (next clock tick), signs and stores tmpl.
func (n *node) publish(sk string, tmpl nostr.Event) *nostr.Event {
	n.t.Helper()
	evt := tmpl
	n.clock++
	evt.CreatedAt = n.clock
	if err := evt.Sign(sk); err != nil {
		n.t.Fatal(err)
	}
	if err := n.r.Publish(context.Background(), &evt); err != nil {
		n.t.Fatalf("publish kind %d: %v", evt.Kind, err)
	}
	return &evt
}

// definition publishes def signed by author and returns it parsed.
func (n *node) definition(author key, def events.Definition) *events.Definition {
	n.t.Helper()
	evt := n.publish(author.SK, def.Template())
	d, err := events.ParseDefinition(evt)
	if err != nil {
		n.t.Fatal(err)
	}
	return d
}

// lesson publishes a lesson on defID signed by sk.
func (n *node) lesson(sk, defID, title, content string) *nostr.Event {
	n.t.Helper()
	l := events.Lesson{DefinitionID: defID, Title: title, Content: content}
	return n.publish(sk, l.Template())
}

// nudge publishes a nudge signed by sk.
func (n *node) nudge(sk string, nd events.Nudge) *nostr.Event {
	n.t.Helper()
	return n.publish(sk, nd.Template())
}

// claims publishes owner's kind 14199 listing agents.
func (n *node) claims(owner key, agents ...string) {
	n.t.Helper()
	c := events.OwnerClaims{Agents: agents}
	n.publish(owner.SK, c.Template())
}

// foreignAgent publishes the kind 0 of an agent run elsewhere: it runs defID
// and names owner.
func (n *node) foreignAgent(defID, owner string) key {
	n.t.Helper()
	k := testkit.NewKey(n.t)
	p := events.Profile{Bot: true, DefinitionID: defID, Owner: owner, Name: "sibling"}
	n.publish(k.SK, p.Template())
	return k
}

// install installs an agent and fails the test on error.
func (n *node) install(req agentd.InstallRequest) agentd.Installed {
	n.t.Helper()
	res, err := n.d.Install(context.Background(), req)
	if err != nil {
		n.t.Fatalf("install %+v: %v", req, err)
	}
	return res
}

// effective fails the test on error.
func (n *node) effective(agent string) lessons.Effective {
	n.t.Helper()
	eff, err := n.d.Effective(context.Background(), agent)
	if err != nil {
		n.t.Fatalf("effective %s: %v", agent, err)
	}
	return eff
}

// reviewer is a definition used by most tests.
func reviewer() events.Definition {
	return events.Definition{Slug: "reviewer", Title: "Code Reviewer", Role: "You review Go code.",
		Instructions: "Be brief.", Tools: []string{"read_file", "comment", "exec"}, Version: "1"}
}

// lessonView returns the view of lesson id in eff.
func lessonView(eff lessons.Effective, id string) (lessons.LessonView, bool) {
	for _, l := range eff.Lessons {
		if l.ID == id {
			return l, true
		}
	}
	return lessons.LessonView{}, false
}

// inPrompt reports whether the lesson's block is in the prompt.
func inPrompt(eff lessons.Effective, id string) bool {
	return strings.Contains(eff.Prompt, "id "+id[:12]+" =====")
}

// within bounds every wait of the package's tests.
const within = 5 * time.Second
