package agentd_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

// codeOf returns err's CAP code ("" for nil).
func codeOf(err error) string {
	if err == nil {
		return ""
	}
	return capabilities.CodeOf(err)
}

func toolNames(defs []capabilities.ToolDef) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
}

// notes returns the titles of the notes the owner sees.
func (cn *capsNode) notes(t *testing.T) []string {
	t.Helper()
	owner := state.Caller{Owner: cn.owner.PK, Verbs: state.AllVerbs}
	res, err := cn.rt.Query(context.Background(), owner, []byte(`{"from":"`+noteURI+`","select":["title"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, r := range res.Rows {
		titles = append(titles, r["title"].(string))
	}
	return titles
}

// denyNudge attaches a nudge that takes tool away from the agent.
func (cn *capsNode) denyNudge(tool string) {
	cn.t.Helper()
	evt := cn.nudge(testkit.NewKey(cn.t).SK, events.Nudge{Title: "no " + tool, DenyTools: []string{tool}, Content: "deny"})
	if _, _, err := cn.d.AddNudge(context.Background(), cn.agent.Npub, evt.ID); err != nil {
		cn.t.Fatal(err)
	}
}

func TestDaemon_Tools_Capability(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"text": "page for " + r.URL.Query().Get("url")})
	}))
	t.Cleanup(page.Close)
	runner := bindings.New(bindings.Config{AllowPrivate: true})
	t.Cleanup(func() { runner.Close() })
	cn := openCapsNode(t, agentd.Config{Bindings: runner})
	ctx := context.Background()
	cn.installFile(sign(t, notePackage(t, "1.0.0", page.URL+"/fetch"), cn.author.SK))

	tools, defs, err := cn.d.Tools(ctx, cn.agent.Npub, noteID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := toolNames(defs), []string{"state.create", "state.query", "fetch_web_content"}; !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	if !strings.Contains(string(defs[0].Parameters), `"rga_text"`) {
		t.Errorf("state.create's {$ref: #/schema} is not resolved: %s", defs[0].Parameters)
	}

	if _, err := tools.CallTool(ctx, "state.create", json.RawMessage(`{"schema_uri":"`+noteURI+`","object":`+noteObject("milk")+`}`)); err != nil {
		t.Fatalf("state.create: %v", err)
	}
	if got := cn.notes(t); !slices.Equal(got, []string{"milk"}) {
		t.Fatalf("notes = %v, want [milk]", got)
	}
	out, err := tools.CallTool(ctx, "state.query", json.RawMessage(`{"from":"`+noteURI+`"}`))
	if err != nil || !strings.Contains(string(out), `"milk"`) {
		t.Fatalf("state.query: %s, %v", out, err)
	}
	// Granted (permissions.require) but not among the package's tools.
	if _, err := tools.CallTool(ctx, "state.update", json.RawMessage(`{}`)); codeOf(err) != capabilities.CodeNotFound {
		t.Errorf("state.update: %v, want NOT_FOUND", err)
	}
	out, err = tools.CallTool(ctx, "fetch_web_content", json.RawMessage(`{"url":"https://example.org/a"}`))
	if err != nil || !strings.Contains(string(out), "page for https://example.org/a") {
		t.Fatalf("fetch_web_content through http_get: %s, %v", out, err)
	}
}

func TestDaemon_Tools_NoBindingRunner(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))
	tools, _, err := cn.d.Tools(context.Background(), cn.agent.Npub, "note")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tools.CallTool(context.Background(), "fetch_web_content", json.RawMessage(`{"url":"x"}`))
	if codeOf(err) != capabilities.CodeExecutionFailed || !strings.Contains(err.Error(), "bindings") {
		t.Fatalf("err = %v, want EXECUTION_FAILED about bindings", err)
	}
}

func TestDaemon_Tools_NudgeDenies(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	ctx := context.Background()
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))
	cn.denyNudge("state.create")

	tools, defs, err := cn.d.Tools(ctx, cn.agent.Npub, "note")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(toolNames(defs), "state.create") {
		t.Fatalf("a denied tool is offered: %v", toolNames(defs))
	}
	_, err = tools.CallTool(ctx, "state.create", json.RawMessage(`{"schema_uri":"`+noteURI+`","object":`+noteObject("denied")+`}`))
	if codeOf(err) != capabilities.CodePermissionDenied {
		t.Fatalf("state.create under a deny nudge: %v, want PERMISSION_DENIED", err)
	}
	if got := cn.notes(t); len(got) != 0 {
		t.Fatalf("a denied call wrote %v", got)
	}
}

func TestDaemon_Tools_Own(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	ctx := context.Background()
	tools, defs, err := cn.d.Tools(ctx, cn.agent.Npub, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(defs); !slices.Equal(got, []string{agentd.ToolLearn}) {
		t.Fatalf("own tools = %v, want [lesson.learn]", got)
	}
	out, err := tools.CallTool(ctx, agentd.ToolLearn, json.RawMessage(`{"title":"t","content":"c"}`))
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ ID string }
	json.Unmarshal(out, &res)
	evts, _ := cn.r.QuerySync(ctx, nostr.Filter{IDs: []string{res.ID}})
	if len(evts) != 1 || evts[0].PubKey != cn.agent.Agent.PubKey {
		t.Fatalf("lesson.learn published %v", evts)
	}
	if _, err := tools.CallTool(ctx, "state.create", json.RawMessage(`{}`)); codeOf(err) != capabilities.CodeNotFound {
		t.Errorf("state.create outside a capability, not in the definition: %v", err)
	}
	if _, _, err := cn.d.Tools(ctx, cn.agent.Npub, "nothing"); !errors.Is(err, agentd.ErrCapNotInstalled) {
		t.Errorf("tools of a capability not installed: %v", err)
	}
	cn.denyNudge(agentd.ToolLearn)
	if _, defs, _ := cn.d.Tools(ctx, cn.agent.Npub, ""); len(defs) != 0 {
		t.Errorf("own tools under a lesson.learn deny: %v", toolNames(defs))
	}
}

func TestDaemon_Tools_NudgeNamesForeignTools(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	ctx := context.Background()
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))
	evt := cn.nudge(testkit.NewKey(t).SK, events.Nudge{Title: "only these", OnlyTools: []string{"state.query", "state.delete"}, Content: "only"})
	if _, _, err := cn.d.AddNudge(ctx, cn.agent.Npub, evt.ID); err != nil {
		t.Fatal(err)
	}
	tools, defs, err := cn.d.Tools(ctx, cn.agent.Npub, "note")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(defs); !slices.Equal(got, []string{"state.query"}) {
		t.Fatalf("tools = %v, want [state.query]: an only-tool must not add tools the package lacks", got)
	}
	if _, err := tools.CallTool(ctx, "state.delete", json.RawMessage(`{}`)); codeOf(err) != capabilities.CodeNotFound {
		t.Fatalf("state.delete (named by the nudge, not by the package): %v", err)
	}
	if _, err := tools.CallTool(ctx, "state.create", json.RawMessage(`{}`)); codeOf(err) != capabilities.CodePermissionDenied {
		t.Fatalf("state.create outside the only-tool set: %v", err)
	}
}
