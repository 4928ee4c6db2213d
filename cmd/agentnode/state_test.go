package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/internal/testkit"
)

const stateTestOwner = "1111111111111111111111111111111111111111111111111111111111111111"

const stateTestSchema = `{"$id":"did:nuwa:state:memo#v1","type":"object",
 "properties":{"title":{"type":"string"},"body":{"type":"string","x-crdt":"rga_text"},"tags":{"type":"array","x-crdt":"grow_only_set"}},
 "required":["title"]}`

func TestState_PutGetQueryHistory(t *testing.T) {
	dir := t.TempDir()
	schemaFile := filepath.Join(dir, "memo.json")
	if err := os.WriteFile(schemaFile, []byte(stateTestSchema), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENTNODE_DATA": filepath.Join(dir, "data"), "AGENTNODE_OWNER": stateTestOwner}
	const uri = "did:nuwa:state:memo#v1"
	r := cli(t, env, "state", "put", "--schema", uri, "--id", "m1", "--schema-file", schemaFile, "--cap", "did:nuwa:cap:memo@1.0.0",
		"--object", `{"title":"first","body":"hello","tags":["a"]}`, "--json")
	if r.err != nil {
		t.Fatal(r.err, r.stderr)
	}
	r = cli(t, env, "state", "put", "--schema", uri, "--id", "m1", "--patch", `[{"op":"add","path":"/tags/-","value":"b"}]`)
	if r.err != nil {
		t.Fatal(r.err)
	}
	// Replacing the whole document merges per field (the set keeps "a" and "b").
	r = cli(t, env, "state", "put", "--schema", uri, "--id", "m1", "--object", `{"title":"second","body":"hello world","tags":["a","b","c"]}`)
	if r.err != nil {
		t.Fatal(r.err)
	}
	r = cli(t, env, "state", "get", "--schema", uri, "--id", "m1", "--json")
	var d struct {
		Object map[string]any `json:"object"`
		Owner  string         `json:"owner"`
	}
	if r.err != nil || json.Unmarshal([]byte(r.stdout), &d) != nil {
		t.Fatalf("get: %v %s", r.err, r.stdout)
	}
	if d.Object["title"] != "second" || d.Object["body"] != "hello world" || d.Owner != stateTestOwner {
		t.Fatalf("get: %+v", d)
	}
	r = cli(t, env, "state", "query", `{"select":["title"],"from":"did:nuwa:state:memo#v1","where":{"tags":{"$contains":"c"}}}`)
	if r.err != nil || !strings.Contains(r.stdout, `"title":"second"`) {
		t.Fatalf("query: %v %q", r.err, r.stdout)
	}
	r = cli(t, env, "state", "history", "--schema", uri, "--id", "m1")
	if r.err != nil || !strings.Contains(r.stdout, "create") || !strings.Contains(r.stdout, "body") {
		t.Fatalf("history: %v\n%s", r.err, r.stdout)
	}
	r = cli(t, env, "state", "get", "--schema", "did:nuwa:core:AgentSettings#v1", "--id", stateTestOwner)
	if r.err != nil || !strings.Contains(r.stdout, `"language": "en"`) {
		t.Fatalf("core settings: %v %s", r.err, r.stdout)
	}
	r = cli(t, env, "state", "put", "--schema", "did:nuwa:core:AgentSettings#v1", "--id", stateTestOwner, "--object", `{"language":"ja","theme":"dark"}`, "--json")
	if r.err != nil || json.Unmarshal([]byte(r.stdout), &d) != nil || d.Object["language"] != "ja" {
		t.Fatalf("replace core settings: %v %s", r.err, r.stdout)
	}
	r = cli(t, map[string]string{"AGENTNODE_DATA": env["AGENTNODE_DATA"]}, "state", "get", "--schema", uri, "--id", "m1")
	if r.err == nil || exitCode(r.err) != 2 {
		t.Fatalf("no owner: %v", r.err)
	}
	r = cli(t, env, "state", "get", "--schema", uri, "--id", "nope")
	if r.err == nil || !strings.Contains(r.err.Error(), "NOT_FOUND") {
		t.Fatalf("missing doc: %v", r.err)
	}
}

// `state gc` prints the counts of its pass; `state stats` shows the last
// pass and the sums, whoever ran them.
func TestState_GCAndStats(t *testing.T) {
	dir := t.TempDir()
	schemaFile := filepath.Join(dir, "otp.json")
	const uri = "did:nuwa:state:otp#v1"
	if err := os.WriteFile(schemaFile, []byte(`{"$id":"`+uri+`","type":"object","x-asm":{"x-ttl":"PT1S"},"properties":{"code":{"type":"string"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENTNODE_DATA": filepath.Join(dir, "data"), "AGENTNODE_OWNER": stateTestOwner}
	r := cli(t, env, "state", "stats")
	if r.err != nil || !strings.Contains(r.stdout, "no pass yet") {
		t.Fatalf("stats before any pass: %v %q", r.err, r.stdout)
	}
	r = cli(t, env, "state", "put", "--schema", uri, "--id", "o1", "--schema-file", schemaFile, "--cap", "did:nuwa:cap:otp@1.0.0", "--object", `{"code":"1"}`)
	if r.err != nil {
		t.Fatal(r.err, r.stderr)
	}
	passes := 0
	testkit.WaitFor(t, 30*time.Second, "a gc pass to purge the expired document", func() bool {
		r = cli(t, env, "state", "gc")
		passes++
		return r.err == nil && r.stdout == "expired ops 0, purged documents 1, evicted items 0, snapshots 0\n"
	})
	r = cli(t, env, "state", "stats")
	if r.err != nil || !strings.Contains(r.stdout, ": expired ops 0, purged documents 1, evicted items 0, snapshots 0\n") ||
		!strings.Contains(r.stdout, fmt.Sprintf("lifecycle %d passes since", passes)) {
		t.Fatalf("stats: %v %q", r.err, r.stdout)
	}
	r = cli(t, env, "state", "stats", "--json")
	var st struct {
		Lifecycle struct {
			Passes int `json:"passes"`
			Totals struct {
				PurgedDocs int `json:"purged_docs"`
			} `json:"totals"`
		} `json:"lifecycle"`
	}
	if r.err != nil || json.Unmarshal([]byte(r.stdout), &st) != nil || st.Lifecycle.Passes != passes || st.Lifecycle.Totals.PurgedDocs != 1 {
		t.Fatalf("stats --json: %v %s", r.err, r.stdout)
	}
}

// setID splices the id in without re-encoding the object, and agrees with
// withID on what the object means.
func TestState_SetID(t *testing.T) {
	for _, in := range []string{`{"a":1}`, ` { } `, `{"id":"x","a":[1,{"id":2}]}`, `{"id":"m1","b":"\u00e9"}`, `{"a":{"id":"m1"}}`} {
		got, err := setID([]byte(in), "m1")
		if err != nil {
			t.Fatal(in, err)
		}
		want, _ := withID([]byte(in), "m1")
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("%s: got %s, want %s", in, got, want)
		}
	}
	if got, _ := setID([]byte(`{"id":"m1","a":1}`), "m1"); string(got) != `{"id":"m1","a":1}` {
		t.Fatalf("unchanged object copied: %s", got)
	}
	for _, bad := range []string{`[1]`, `"s"`, `null`, `{`} {
		if _, err := setID([]byte(bad), "m1"); err == nil {
			t.Fatalf("%s accepted", bad)
		}
	}
}
