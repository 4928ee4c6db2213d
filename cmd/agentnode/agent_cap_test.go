package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/internal/testkit"
)

// openCapAgentNode is openAgentNode with a state runtime (and model, when
// given) wired into the daemon as serve wires them.
func openCapAgentNode(t *testing.T, model agentd.ChatModel) *agentNode {
	t.Helper()
	return startAgentNode(t, func(cfg *agentd.Config) func(context.Context) {
		rt, err := state.Open(context.Background(), state.Options{Dir: cfg.DataDir, Logger: cfg.Logger})
		if err != nil {
			t.Fatal(err)
		}
		cfg.State, cfg.Model = rt, model
		return func(ctx context.Context) { rt.Close(ctx) }
	})
}

// installAgent publishes a definition and installs an agent of it; it
// returns the agent's npub.
func (n *agentNode) installAgent(t *testing.T) string {
	t.Helper()
	authorSK := testkit.NewKey(t).SK
	ownerPK := testkit.NewKey(t).PK
	def := n.publishDefinition(t, authorSK, "--title", "Notes Agent", "--role", "You keep notes.")
	var res agentd.Installed
	decodeJSON(t, n.run(t, "", "agent", "install", def.ID, "--owner", ownerPK, "--json"), &res)
	return res.Npub
}

// notePackageFile writes the note package at version (signed with sk
// unless sk is "") into dir and returns its path.
func notePackageFile(t *testing.T, dir, version, sk string, extra ...string) string {
	t.Helper()
	b, err := os.ReadFile("../../agentd/testdata/note.acp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "{{FETCH_URL}}", "http://example.org/fetch")
	s = strings.Replace(s, "did:nuwa:cap:note@1.0.0", "did:nuwa:cap:note@"+version, 1)
	if len(extra) > 0 {
		s = strings.Replace(s, `"state.query"]`, `"state.query", "`+strings.Join(extra, `", "`)+`"]`, 1)
	}
	raw := []byte(s)
	if sk != "" {
		if raw, err = acp.SignAs(raw, sk, acp.SigFormNostr); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "note-"+version+".acp.yaml")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// publishPackage publishes the package file as a kind 30199 signed by sk.
func (n *agentNode) publishPackage(t *testing.T, path, sk string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := acp.Parse(raw, acp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	evt := acp.EventTemplate(p)
	evt.CreatedAt = nostr.Now()
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	if err := n.relay.Publish(context.Background(), &evt); err != nil {
		t.Fatal(err)
	}
}

func TestAgentCap(t *testing.T) {
	n := openCapAgentNode(t, nil)
	agent := n.installAgent(t)
	authorSK := testkit.NewKey(t).SK
	dir := t.TempDir()

	unsigned := notePackageFile(t, dir, "1.0.0", "")
	r := cli(t, n.env(""), "agent", "cap", "install", agent, unsigned)
	if r.err == nil || exitCode(r.err) != 1 || !strings.Contains(r.err.Error(), "not signed") {
		t.Fatalf("unsigned file: %v", r.err)
	}

	signed := notePackageFile(t, dir, "1.0.0", authorSK)
	out := n.run(t, "", "agent", "cap", "install", agent, signed)
	if !strings.Contains(out, "installed did:nuwa:cap:note@1.0.0") || !strings.Contains(out, "sc:note") {
		t.Fatalf("install output:\n%s", out)
	}
	var list []agentd.InstalledCap
	decodeJSON(t, n.run(t, "", "agent", "cap", "list", agent, "--json"), &list)
	if len(list) != 1 || list[0].Version != "1.0.0" {
		t.Fatalf("list: %+v", list)
	}
	if out := n.run(t, "", "agent", "cap", "list", agent); !strings.Contains(out, "did:nuwa:cap:note@1.0.0") {
		t.Fatalf("list table:\n%s", out)
	}

	n.publishPackage(t, notePackageFile(t, dir, "1.1.0", authorSK, "state.delete"), authorSK)
	r = cli(t, n.env(""), "agent", "cap", "upgrade", agent, "note")
	if r.err == nil || !strings.Contains(r.err.Error(), "state.delete") || !strings.Contains(r.err.Error(), "--accept-permissions") {
		t.Fatalf("upgrade adding a permission without accepting it: %v", r.err)
	}
	out = n.run(t, "", "agent", "cap", "upgrade", agent, "note", "--accept-permissions")
	if !strings.Contains(out, "upgraded did:nuwa:cap:note@1.0.0 -> did:nuwa:cap:note@1.1.0") || !strings.Contains(out, "permissions added:   state.delete") {
		t.Fatalf("upgrade output:\n%s", out)
	}

	out = n.run(t, "", "agent", "cap", "upgrade", agent, "note", "--file", notePackageFile(t, dir, "1.2.0", authorSK, "state.delete"))
	if !strings.Contains(out, "upgraded did:nuwa:cap:note@1.1.0 -> did:nuwa:cap:note@1.2.0") {
		t.Fatalf("upgrade --file output:\n%s", out)
	}

	out = n.run(t, "", "agent", "cap", "remove", agent, "note")
	if !strings.Contains(out, "removed did:nuwa:cap:note@1.2.0") || !strings.Contains(out, "state stays") {
		t.Fatalf("remove output:\n%s", out)
	}
	if out := n.run(t, "", "agent", "cap", "list", agent); !strings.Contains(out, "no capabilities installed") {
		t.Fatalf("list after remove:\n%s", out)
	}
	if r := cli(t, n.env(""), "agent", "cap", "install", agent); exitCode(r.err) != 2 {
		t.Fatalf("missing argument: %v", r.err)
	}
}
