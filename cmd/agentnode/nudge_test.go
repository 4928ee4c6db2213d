package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

func TestNudgePublish(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	sk := testkit.NewKey(t).SK
	evt := publishedEvent(t, n.run(t, sk, "nudge", "publish", "--json", "--title", "read-only",
		"--only-tool", "read", "--allow-tool", "write", "--deny-tool", "exec", "--content", "do not change files"))
	nudge, err := events.ParseNudge(evt)
	if err != nil {
		t.Fatal(err)
	}
	if nudge.Title != "read-only" || !slices.Equal(nudge.OnlyTools, []string{"read"}) ||
		!slices.Equal(nudge.AllowTools, []string{"write"}) || !slices.Equal(nudge.DenyTools, []string{"exec"}) ||
		nudge.Content != "do not change files" {
		t.Fatalf("nudge = %+v", nudge)
	}
	if r := n.try(t, sk, "nudge", "publish", "--only-tool", "x"); r.err == nil || exitCode(r.err) != 2 {
		t.Fatalf("nudge without title or content: err = %v, want a usage error", r.err)
	}
}

func TestWrites_GoToEveryRelay(t *testing.T) {
	a := openTestNode(t, relay.Limits{})
	b := openTestNode(t, relay.Limits{})
	strict := openTestNode(t, relay.Limits{MaxContentBytes: 8})
	sk := testkit.NewKey(t).SK
	env := map[string]string{"AGENTNODE_KEY": sk}

	r := cli(t, env, "def", "publish", "--relay", a.URL, "--relay", b.URL, "--title", "Both", "--content", "long enough", "--json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	evt := publishedEvent(t, r.stdout)
	for _, n := range []*testNode{a, b} {
		if got := n.query(t, eventFilter(evt.ID)); len(got) != 1 {
			t.Fatalf("relay %s holds %d copies", n.URL, len(got))
		}
	}

	r = cli(t, env, "def", "publish", "--relay", a.URL, "--relay", strict.URL, "--title", "Partial", "--content", "long enough")
	if r.err == nil || !strings.Contains(r.err.Error(), strict.URL) || !strings.Contains(r.err.Error(), "invalid: content is") {
		t.Fatalf("err = %v, want the strict relay's refusal", r.err)
	}
	if !strings.Contains(r.stdout, "accepted by "+a.URL) {
		t.Errorf("stdout does not report the relay that accepted:\n%s", r.stdout)
	}
}
