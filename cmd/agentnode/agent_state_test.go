package main

import (
	"context"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/internal/testkit"
)

// openNotes has the agent's owner open the note schema to others' writes
// (agent state open): what a node that lets other agents leave notes on
// its agent does (docs/ASM.md §6).
func (n a2aNode) openNotes(t *testing.T) {
	t.Helper()
	req := agentd.StateAccessRequest{Schema: "did:nuwa:state:note#v1", Access: agentd.AccessWrite, Open: true}
	if _, err := n.Daemon().SetStateAccess(context.Background(), n.agent.Npub, req); err != nil {
		t.Fatal(err)
	}
}

func TestAgentState_openCloseShow(t *testing.T) {
	n := openCapAgentNode(t, nil)
	agent := n.installAgent(t)
	const uri = "did:nuwa:state:note#v1"
	if out := n.run(t, "", "agent", "show", agent); !strings.Contains(out, "state open") || !strings.Contains(out, "nothing") {
		t.Fatalf("agent show before anything is open:\n%s", out)
	}
	r := cli(t, n.env(""), "agent", "state", "open", agent, uri, "write")
	if r.err == nil || !strings.Contains(r.err.Error()+r.stderr, "not a core model nor declared") {
		t.Fatalf("opening a schema the agent lacks: %v\n%s", r.err, r.stderr)
	}
	n.run(t, "", "agent", "cap", "install", agent, notePackageFile(t, t.TempDir(), "1.0.0", testkit.NewKey(t).SK))
	if r := cli(t, n.env(""), "agent", "state", "open", agent, uri, "admin"); r.err == nil {
		t.Fatal("agent state open ... admin: no error")
	}
	n.run(t, "", "agent", "state", "open", agent, uri, "write")
	out := n.run(t, "", "agent", "state", "open", agent, uri, "read")
	if !strings.Contains(out, uri+" read, write") {
		t.Fatalf("agent state open output: %s", out)
	}
	var v agentd.AgentView
	decodeJSON(t, n.run(t, "", "agent", "show", agent, "--json"), &v)
	if len(v.StateOpen) != 1 || !v.StateOpen[0].Read || !v.StateOpen[0].Write {
		t.Fatalf("agent show --json state_open = %+v", v.StateOpen)
	}
	n.run(t, "", "agent", "state", "close", agent, uri, "read")
	n.run(t, "", "agent", "state", "close", agent, uri, "write")
	var closed agentd.AgentView
	decodeJSON(t, n.run(t, "", "agent", "show", agent, "--json"), &closed)
	if len(closed.StateOpen) != 0 {
		t.Fatalf("after closing: state_open = %+v", closed.StateOpen)
	}
}
