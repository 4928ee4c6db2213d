package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// publishDef publishes a definition with the CLI and returns the signed event.
func publishDef(t *testing.T, n *testNode, sk string, args ...string) *nostr.Event {
	t.Helper()
	return publishedEvent(t, n.run(t, sk, append([]string{"def", "publish", "--json"}, args...)...))
}

func TestDefPublish_FromFlags_ListAndShow(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	skKey := testkit.NewKey(t)
	sk, pk := skKey.SK, skKey.PK
	evt := publishDef(t, n, sk, "--title", "Code Reviewer", "--role", "a careful reviewer",
		"--instructions", "read every line", "--use-criteria", "pull requests", "--description", "reviews code",
		"--tool", "git", "--tool", "grep", "--ver", "3", "--image", "https://example.com/a.png",
		"--slug", "code-reviewer", "--content", "# Reviewer\nbe kind")

	stored := n.query(t, nostr.Filter{IDs: []string{evt.ID}})
	if len(stored) != 1 || stored[0].PubKey != pk {
		t.Fatalf("relay holds %d events for %s", len(stored), evt.ID)
	}
	d, err := events.ParseDefinition(stored[0])
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Code Reviewer" || d.UseCriteria != "pull requests" || !slices.Equal(d.Tools, []string{"git", "grep"}) ||
		d.Version != "3" || d.Slug != "code-reviewer" || d.Content != "# Reviewer\nbe kind" {
		t.Fatalf("stored definition = %+v", d)
	}

	var list []definitionView
	decodeJSON(t, n.run(t, "", "def", "list", "--json"), &list)
	if len(list) != 1 || list[0].ID != evt.ID || list[0].Npub != npub(pk) {
		t.Fatalf("def list = %+v", list)
	}

	var show definitionDetail
	decodeJSON(t, n.run(t, "", "def", "show", list[0].Nevent, "--json"), &show)
	if show.ID != evt.ID || show.Role != "a careful reviewer" || show.Instructions != "read every line" ||
		show.Image != "https://example.com/a.png" || show.Lessons != 0 || show.LatestID != evt.ID {
		t.Fatalf("def show = %+v", show)
	}

	human := n.run(t, "", "def", "show", evt.ID)
	for _, want := range []string{"Code Reviewer", "git, grep", "lessons", "be kind"} {
		if !strings.Contains(human, want) {
			t.Errorf("def show output lacks %q:\n%s", want, human)
		}
	}
}

func TestDefPublish_FromYAMLFile(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	skKey := testkit.NewKey(t)
	sk, pk := skKey.SK, skKey.PK
	path := filepath.Join(t.TempDir(), "def.yaml")
	yaml := `title: Researcher
role: finds sources
use_criteria: questions that need citations
description: research assistant
tools: [web_search, fetch]
ver: 2
slug: researcher
content: |
  Cite everything.
`
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	evt := publishDef(t, n, sk, "--file", path, "--description", "overridden by the flag")

	var show definitionDetail
	decodeJSON(t, n.run(t, "", "def", "show", npub(pk)+":researcher", "--json"), &show)
	if show.ID != evt.ID || show.Title != "Researcher" || show.UseCriteria != "questions that need citations" ||
		!slices.Equal(show.Tools, []string{"web_search", "fetch"}) || show.Version != "2" ||
		show.Content != "Cite everything.\n" || show.Description != "overridden by the flag" {
		t.Fatalf("def show = %+v", show)
	}
}

func TestDefPublish_FromJSONFile(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	sk := testkit.NewKey(t).SK
	path := filepath.Join(t.TempDir(), "def.json")
	os.WriteFile(path, []byte(`{"title": "Planner", "use-criteria": "multi-step work", "tools": ["todo"], "ver": "1.2"}`), 0o644)
	evt := publishDef(t, n, sk, "--file", path)
	d, err := events.ParseDefinition(evt)
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Planner" || d.UseCriteria != "multi-step work" || d.Version != "1.2" {
		t.Fatalf("definition = %+v", d)
	}
}

func TestDefPublish_FileUnknownFieldIsRefused(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	sk := testkit.NewKey(t).SK
	path := filepath.Join(t.TempDir(), "def.yaml")
	os.WriteFile(path, []byte("title: X\ntitel: typo\n"), 0o644)
	r := n.try(t, sk, "def", "publish", "--file", path)
	if r.err == nil || !strings.Contains(r.err.Error(), `line 2: unknown field "titel" (known: title,`) || strings.Contains(r.err.Error(), "main.") {
		t.Fatalf("err = %v, want one naming the unknown field", r.err)
	}
}

func TestDefPublish_MissingKey(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	r := n.try(t, "", "def", "publish", "--title", "X")
	if r.err == nil || !strings.Contains(r.err.Error(), "AGENTNODE_KEY") || exitCode(r.err) != 2 {
		t.Fatalf("err = %v, want a usage error naming AGENTNODE_KEY", r.err)
	}
	r = n.try(t, "not-a-key", "def", "publish", "--title", "X")
	if r.err == nil || !strings.Contains(r.err.Error(), "secret key") || strings.Contains(r.err.Error(), "not-a-key") {
		t.Fatalf("err = %v, want a bad-key error that does not echo the key", r.err)
	}
}

func TestDefList_LatestVersionPerSlug(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	skKey := testkit.NewKey(t)
	sk, pk := skKey.SK, skKey.PK
	v1 := publishDef(t, n, sk, "--title", "Writer", "--slug", "writer", "--ver", "1", "--content", "old")
	v2 := publishDef(t, n, sk, "--title", "Writer", "--slug", "writer", "--ver", "2", "--content", "new")
	other := publishDef(t, n, sk, "--title", "Editor", "--ver", "1")

	var list []definitionView
	decodeJSON(t, n.run(t, "", "def", "list", "--json"), &list)
	ids := viewIDs(list)
	if len(list) != 2 || !slices.Contains(ids, v2.ID) || !slices.Contains(ids, other.ID) {
		t.Fatalf("def list ids = %v, want v2 %s and editor %s", ids, v2.ID, other.ID)
	}

	decodeJSON(t, n.run(t, "", "def", "list", "--all-versions", "--json"), &list)
	if len(list) != 3 {
		t.Fatalf("def list --all-versions: %d definitions, want 3", len(list))
	}

	var show definitionDetail
	decodeJSON(t, n.run(t, "", "def", "show", npub(pk)+":writer", "--json"), &show)
	if show.ID != v2.ID || show.Content != "new" {
		t.Fatalf("def show npub:writer = %s (%q), want v2 %s", show.ID, show.Content, v2.ID)
	}
	decodeJSON(t, n.run(t, "", "def", "show", v1.ID, "--json"), &show)
	if show.ID != v1.ID || show.LatestID != v2.ID {
		t.Fatalf("def show v1: id %s latest %s, want %s and %s", show.ID, show.LatestID, v1.ID, v2.ID)
	}
	if out := n.run(t, "", "def", "show", v1.ID); !strings.Contains(out, "newer version") {
		t.Errorf("def show of an old version does not point at the newer one:\n%s", out)
	}
}

func TestDefList_Filters(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	aliceKey := testkit.NewKey(t)
	alice, alicePK := aliceKey.SK, aliceKey.PK
	bob := testkit.NewKey(t).SK
	a := publishDef(t, n, alice, "--title", "Translator", "--description", "translates between languages", "--tool", "dictionary")
	b := publishDef(t, n, bob, "--title", "Accountant", "--description", "keeps the books", "--tool", "ledger")

	var list []definitionView
	decodeJSON(t, n.run(t, "", "def", "list", "--author", npub(alicePK), "--json"), &list)
	if got := viewIDs(list); !slices.Equal(got, []string{a.ID}) {
		t.Errorf("--author: %v, want [%s]", got, a.ID)
	}
	decodeJSON(t, n.run(t, "", "def", "list", "--tool", "ledger", "--json"), &list)
	if got := viewIDs(list); !slices.Equal(got, []string{b.ID}) {
		t.Errorf("--tool: %v, want [%s]", got, b.ID)
	}
	decodeJSON(t, n.run(t, "", "def", "list", "--search", "languages", "--json"), &list)
	if got := viewIDs(list); !slices.Equal(got, []string{a.ID}) {
		t.Errorf("--search: %v, want [%s]", got, a.ID)
	}
	decodeJSON(t, n.run(t, "", "def", "list", "--limit", "1", "--json"), &list)
	if len(list) != 1 {
		t.Errorf("--limit 1: %d definitions", len(list))
	}
	if out := n.run(t, "", "def", "list"); !strings.Contains(out, "TITLE") || !strings.Contains(out, "Translator") {
		t.Errorf("human def list:\n%s", out)
	}
}

func TestDefList_SearchHidesSupersededMatches(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	sk := testkit.NewKey(t).SK
	publishDef(t, n, sk, "--title", "Bot", "--slug", "bot", "--ver", "1", "--description", "speaks klingon")
	publishDef(t, n, sk, "--title", "Bot", "--slug", "bot", "--ver", "2", "--description", "speaks vulcan")
	var list []definitionView
	decodeJSON(t, n.run(t, "", "def", "list", "--search", "klingon", "--json"), &list)
	if len(list) != 0 {
		t.Fatalf("search matched only a superseded version, yet def list shows %+v", list)
	}
	decodeJSON(t, n.run(t, "", "def", "list", "--search", "klingon", "--all-versions", "--json"), &list)
	if len(list) != 1 || list[0].Version != "1" {
		t.Fatalf("--all-versions search = %+v", list)
	}
}

func TestDefShow_NotFound(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	missing := strings.Repeat("ab", 32)
	r := n.try(t, "", "def", "show", missing)
	if r.err == nil || !strings.Contains(r.err.Error(), "def show: no definition with id "+missing) {
		t.Fatalf("err = %v", r.err)
	}
	r = n.try(t, "", "def", "show", "garbage")
	if r.err == nil || exitCode(r.err) != 2 {
		t.Fatalf("def show garbage: err = %v, want a usage error", r.err)
	}
}

func viewIDs(list []definitionView) []string {
	var ids []string
	for _, v := range list {
		ids = append(ids, v.ID)
	}
	return ids
}
