package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/internal/testkit"
)

// Issue 27's Nuwa NIP-8 and CAP edges, against a served node over CAP
// (/cap/agents/{agent}) and the CLI.

// counterNotePackage is the note package with a counter field (hits) and
// state.query declared with NIP-8's parameter, {"query": ASM-QL}.
func counterNotePackage(t *testing.T) []byte {
	t.Helper()
	s := string(mustReadFile(t, notePackageFile(t, t.TempDir(), "1.0.0", "")))
	s = strings.Replace(s, `"updatedAt":{"type":"string","format":"date-time"}`,
		`"updatedAt":{"type":"string","format":"date-time"},
      "hits":{"type":"integer","x-crdt":"counter"}`, 1)
	s = strings.Replace(s, `          from: {type: string, enum: ["did:nuwa:state:note#v1"]}
          where: {type: object}
        required: [from]`, `          query: {type: object}
        required: [query]`, 1)
	if !strings.Contains(s, `"hits"`) || !strings.Contains(s, "required: [query]") {
		t.Fatal("the note package changed: the test's edits no longer apply")
	}
	return []byte(s)
}

// TestSpecsASMCoreModels_E2E: the agent's core models exist from its
// install (its first run), before any state call.
func TestSpecsASMCoreModels_E2E(t *testing.T) {
	n := startEndpointNode(t, "Note Keeper")
	owner := state.Caller{Agent: n.agentPK(), Owner: n.agent.Agent.Owner}
	for _, uri := range schema.CoreURIs {
		s, _ := n.State().Schemas().Lookup(uri)
		if _, err := n.State().Store().Get(context.Background(), s, state.CoreID(owner), store.Filter{SQL: "1 = 1"}); err != nil {
			t.Fatalf("core model %s of a just-installed agent: %v", uri, err)
		}
	}
}

// TestSpecsASM_E2E: state.query takes NIP-8's {"query": {...}} form, and a
// counter created as 0 is stored and matched by where {"hits": 0}.
func TestSpecsASM_E2E(t *testing.T) {
	n := startEndpointNode(t, "Note Keeper")
	n.installSigned(t, counterNotePackage(t))
	call := func(t *testing.T, method string, params any) rpcReply {
		t.Helper()
		return rpcPost(t, n.url("/cap/agents/"+n.agentPK()), n.token, method, params)
	}
	invoke := func(tool string, input any) invokeResult {
		t.Helper()
		var res invokeResult
		ref := map[string]any{"capability_id": "did:nuwa:cap:note/" + tool, "version": "1.0.0"}
		mustResult(t, tool, call(t, "capability.invoke", map[string]any{"ref": ref, "input": input}), &res)
		return res
	}
	obj := noteObject("88888888-8888-4888-8888-888888888888", "zero hits")
	obj["hits"] = 0
	created := invoke("state.create", map[string]any{"schema_uri": noteSchema, "object": obj})
	if !created.OK {
		t.Fatalf("state.create with hits 0: %+v", created.Error)
	}
	query := func(ast map[string]any) []map[string]any {
		t.Helper()
		res := invoke("state.query", map[string]any{"query": ast})
		var out struct {
			Rows []map[string]any `json:"rows"`
		}
		if !res.OK || json.Unmarshal(res.Output, &out) != nil {
			t.Fatalf("state.query {query: %v}: ok %v, error %+v", ast, res.OK, res.Error)
		}
		return out.Rows
	}
	if rows := query(map[string]any{"select": []string{"id"}, "from": noteSchema}); len(rows) != 1 {
		t.Fatalf("state.query in the wrapped form: %v; want the note", rows)
	}
	if !strings.Contains(string(created.Output), `"hits":0`) {
		t.Fatalf("state.create with hits 0 = %s; want the counter kept at 0", created.Output)
	}
	rows := query(map[string]any{"select": []string{"id", "hits"}, "from": noteSchema, "where": map[string]any{"hits": 0}})
	if len(rows) != 1 || rows[0]["hits"] != float64(0) {
		t.Fatalf("state.query where hits = 0: %v; want the note", rows)
	}
}

// TestSpecsCAPVersionRange_E2E: capability.describe with a range ("1",
// "^1.0.0") answers the highest installed version it matches; a range
// nothing matches is NOT_FOUND.
func TestSpecsCAPVersionRange_E2E(t *testing.T) {
	n := startEndpointNode(t, "Note Keeper")
	n.installSigned(t, mustReadFile(t, notePackageFile(t, t.TempDir(), "1.0.0", "")))
	call := func(version string) rpcReply {
		return rpcPost(t, n.url("/cap/agents/"+n.agentPK()), n.token, "capability.describe",
			map[string]any{"capability_id": noteCreateCap, "version": version})
	}
	for _, v := range []string{"1", "^1.0.0", "1.x", "~1.0", ">=1.0.0 <2", "1.0.0"} {
		var m struct {
			Version string `json:"version"`
		}
		mustResult(t, "describe "+v, call(v), &m)
		if m.Version != "1.0.0" {
			t.Fatalf("describe version %q = %q, want 1.0.0", v, m.Version)
		}
	}
	for _, v := range []string{"2", "^2.0.0", "<1.0.0", "not a range"} {
		if r := call(v); r.Error == nil || r.Error.Code != cap.CodeNotFound {
			t.Fatalf("describe version %q = %s %+v; want NOT_FOUND (cap.CodeNotFound)", v, r.Result, r.Error)
		}
	}
}

// TestSpecsCapVerifyXASM: cap sign, verify and publish refuse a schema
// whose x-asm annotations agent cap install refuses (an unknown container,
// an x-crdt that is not NIP-8's), with the reason.
func TestSpecsCapVerifyXASM(t *testing.T) {
	sk := testkit.NewKey(t).SK
	for name, edit := range map[string][2]string{
		"x-crdt":    {`"x-crdt":"lww_register"`, `"x-crdt":"no_such_crdt"`},
		"container": {`"type":"object",`, `"type":"object", "x-asm": {"container": "heap"},`},
	} {
		t.Run(name, func(t *testing.T) {
			s := string(mustReadFile(t, notePackageFile(t, t.TempDir(), "1.0.0", "")))
			bad := strings.Replace(s, edit[0], edit[1], 1)
			if bad == s {
				t.Fatal("edit did not apply")
			}
			path := filepath.Join(t.TempDir(), "bad.acp.yaml")
			if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"AGENTNODE_KEY": sk}
			r := cli(t, env, "cap", "sign", path)
			if r.err == nil || !strings.Contains(r.err.Error()+r.stderr, "schema") {
				t.Fatalf("cap sign of a bad x-asm schema: %v %s; want refused naming the schema", r.err, r.stderr)
			}
			signed, err := signFile(t, []byte(bad), sk)
			if err != nil {
				t.Fatal(err)
			}
			if r := cli(t, env, "cap", "verify", signed); r.err == nil || !strings.Contains(r.err.Error()+r.stderr, "schema") {
				t.Fatalf("cap verify of a signed bad x-asm schema: %v %s; want refused", r.err, r.stderr)
			}
		})
	}
}

// signFile signs raw with sk (acp.Sign, which does not check x-asm) and
// writes it to a file.
func signFile(t *testing.T, raw []byte, sk string) (string, error) {
	t.Helper()
	signed, err := acp.SignAs(raw, sk, acp.SigFormNostr)
	if err != nil {
		return "", err
	}
	path := filepath.Join(t.TempDir(), "signed.acp.yaml")
	return path, os.WriteFile(path, signed, 0o600)
}

// TestSpecsASMSchemaFromRegistry_E2E: a schema published (cap publish) but
// installed nowhere resolves through the node's registry (NIP-8's local
// cache → Registry order): the agent's state query on its $id answers,
// where it answered NOT_FOUND: unknown schema. A requester's call does not
// resolve it, and a $id no package declares stays NOT_FOUND.
func TestSpecsASMSchemaFromRegistry_E2E(t *testing.T) {
	n := startEndpointNode(t, "Note Keeper")
	author := testkit.NewKey(t)
	env := n.env()
	env["AGENTNODE_KEY"] = author.SK
	mustCLI(t, env, "cap", "publish", notePackageFile(t, t.TempDir(), "1.0.0", author.SK))
	c := state.Caller{Agent: n.agentPK(), Owner: n.agent.Agent.Owner, Verbs: state.AllVerbs}
	ctx := context.Background()
	testkit.WaitFor(t, e2eWait, "the registry to index the package", func() bool {
		_, err := n.rt.reg.Resolve(ctx, "note", "")
		return err == nil
	})
	stranger := c
	stranger.Requester = testkit.NewKey(t).PK
	if _, err := n.State().Query(ctx, stranger, []byte(`{"from":"did:nuwa:state:note#v1"}`)); err == nil || !strings.Contains(err.Error(), "unknown schema") {
		t.Fatalf("a requester's call on a published schema: %v; want NOT_FOUND (only the agent or its owner resolves)", err)
	}
	var err error
	testkit.WaitFor(t, e2eWait, "the published schema to resolve", func() bool {
		_, err = n.State().Query(ctx, c, []byte(`{"from":"did:nuwa:state:note#v1"}`))
		return err == nil
	})
	if _, err := n.State().Query(ctx, c, []byte(`{"from":"did:nuwa:state:nothing#v1"}`)); err == nil || !strings.Contains(err.Error(), "unknown schema") {
		t.Fatalf("a schema no package declares: %v; want NOT_FOUND unknown schema", err)
	}
}
