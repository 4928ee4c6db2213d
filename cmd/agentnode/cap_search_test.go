package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities/registry/registrytest"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// runCap runs one cap subcommand function against the node.
func (n *testNode) runCap(t *testing.T, fn func(context.Context, *Main, []string) error, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	env := n.env("")
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := fn(ctx, m, args)
	return out.String(), err
}

func (n *testNode) publishCap(t *testing.T, sk string, s registrytest.Spec, createdAt int64) string {
	t.Helper()
	evt, err := registrytest.Event(s, sk, createdAt)
	if err != nil {
		t.Fatal(err)
	}
	n.publishDirect(t, evt)
	return evt.ID
}

func TestCapSearch(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	aliceKey := testkit.NewKey(t)
	alice, alicePK := aliceKey.SK, aliceKey.PK
	bob := testkit.NewKey(t).SK
	n.publishCap(t, alice, registrytest.Spec{Name: "note", Version: "1.0.0", Description: "Personal notes"}, 1_700_000_000)
	n.publishCap(t, alice, registrytest.Spec{Name: "note", Version: "1.1.0", Description: "Personal notes, improved"}, 1_700_000_001)
	n.publishCap(t, bob, registrytest.Spec{Name: "weather", Version: "0.3.0", Description: "Forecasts",
		Tools: []string{"get_current_weather"}}, 1_700_000_002)

	var list []capabilityView
	out, err := n.runCap(t, runCapSearch, "notes", "--json")
	if err != nil {
		t.Fatal(err)
	}
	decodeJSON(t, out, &list)
	if len(list) != 1 || list[0].URI != "did:nuwa:cap:note@1.1.0" || list[0].PubKey != alicePK || list[0].Npub != npub(alicePK) ||
		!strings.HasPrefix(list[0].Naddr, "naddr1") || len(list[0].SHA256) != 64 {
		t.Fatalf("search notes: %+v", list)
	}
	out, _ = n.runCap(t, runCapSearch, "--tool", "get_current_weather", "--json")
	decodeJSON(t, out, &list)
	if len(list) != 1 || list[0].Name != "weather" {
		t.Fatalf("search --tool: %+v", list)
	}
	out, _ = n.runCap(t, runCapSearch, "--author", npub(alicePK), "--json")
	decodeJSON(t, out, &list)
	if len(list) != 1 || list[0].Name != "note" {
		t.Fatalf("search --author: %+v", list)
	}
	out = n.run(t, "", "cap", "search", "forecasts") // registered in the cap group
	if !strings.Contains(out, "URI") || !strings.Contains(out, "did:nuwa:cap:weather@0.3.0") {
		t.Fatalf("table: %s", out)
	}
	if out, _ = n.runCap(t, runCapSearch, "klingon"); !strings.Contains(out, "no capabilities found") {
		t.Fatalf("no hits: %s", out)
	}
	if _, err := n.runCap(t, runCapSearch, "--author", "nobody"); err == nil {
		t.Fatal("bad --author accepted")
	}
}

func TestCapShow(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	aliceKey := testkit.NewKey(t)
	alice, alicePK := aliceKey.SK, aliceKey.PK
	bobKey := testkit.NewKey(t)
	bob, bobPK := bobKey.SK, bobKey.PK
	n.publishCap(t, alice, registrytest.Spec{Name: "note", Version: "1.0.0"}, 1_700_000_000)
	latest := n.publishCap(t, alice, registrytest.Spec{Name: "note", Version: "1.2.0"}, 1_700_000_001)
	bobs := n.publishCap(t, bob, registrytest.Spec{Name: "note", Version: "9.0.0"}, 1_700_000_002)

	var v capShowView
	// Two authors and nobody trusted: the CLI has no memory of which it
	// saw first, and created_at is anyone's to choose (docs/REGISTRY.md).
	if _, err := n.runCap(t, runCapShow, "did:nuwa:cap:note", "--json"); err == nil || !strings.Contains(err.Error(), "ambiguous") ||
		!strings.Contains(err.Error(), npub(alicePK)) || !strings.Contains(err.Error(), npub(bobPK)) {
		t.Fatalf("show a name two authors publish: %v, want ambiguous naming both", err)
	}
	out, err := n.runCap(t, runCapShow, "did:nuwa:cap:note", "--author", npub(alicePK), "--json")
	if err != nil {
		t.Fatal(err)
	}
	decodeJSON(t, out, &v)
	if v.EventID != latest || v.Version != "1.2.0" ||
		!strings.Contains(v.Content, "did:nuwa:cap:note@1.2.0") || v.SchemaURI != "did:nuwa:state:note#v1" {
		t.Fatalf("show latest: %+v", v)
	}
	out, _ = n.runCap(t, runCapShow, "note", "--author", npub(bobPK), "--json")
	decodeJSON(t, out, &v)
	if v.EventID != bobs {
		t.Fatalf("show --author bob: %+v", v)
	}
	out, _ = n.runCap(t, runCapShow, v.Naddr, "--json") // bob's naddr, exactly
	decodeJSON(t, out, &v)
	if v.EventID != bobs || v.PubKey != bobPK {
		t.Fatalf("show naddr: %+v", v)
	}
	out, _ = n.runCap(t, runCapShow, "note@1.0.0") // bob has no 1.0.0: no alternatives
	if !strings.Contains(out, "did:nuwa:cap:note@1.0.0") || !strings.Contains(out, npub(alicePK)) || strings.Contains(out, "Also by") {
		t.Fatalf("human output of note@1.0.0: %s", out)
	}
	if out, _ = n.runCap(t, runCapShow, "note@9.0.0"); !strings.Contains(out, npub(bobPK)) || strings.Contains(out, "Also by") {
		t.Fatalf("human output of note@9.0.0: %s", out)
	}
	if _, err := n.runCap(t, runCapShow, "note@7.0.0"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("missing version: %v", err)
	}
	if _, err := n.runCap(t, runCapShow); err == nil {
		t.Fatal("no argument accepted")
	}
}
