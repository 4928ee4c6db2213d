package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/capabilities/mcpserver"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/capabilities/registry/registrytest"
)

// countSource serves a counter whose output_schema is declared, a liar
// that breaks its own, and a tool a nudge hides.
type countSource struct{ agent string }

var countSchema = json.RawMessage(`{"type":"object","properties":{"words":{"type":"integer"}},"required":["words"]}`)

func (s countSource) Capabilities(context.Context, string) ([]cap.Capability, error) {
	in := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	m := func(id string) cap.Manifest {
		return cap.Manifest{CapabilityID: id, Version: "1.0.0", Kind: cap.KindTool, Name: id, InputSchema: in, OutputSchema: countSchema}
	}
	return []cap.Capability{{Manifest: m("cap:count")}, {Manifest: m("cap:liar")}, {Manifest: m("cap:hidden"), Hidden: true}}, nil
}

func (s countSource) Run(_ context.Context, _ string, c cap.Capability, _ json.RawMessage) (json.RawMessage, error) {
	if c.Manifest.CapabilityID == "cap:liar" {
		return json.RawMessage(`{"words":"many"}`), nil
	}
	return json.RawMessage(`{"words":2}`), nil
}

func setupCount(t *testing.T) string {
	t.Helper()
	_, agent := registrytest.Key(t)
	opts := mcpserver.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Authorize: func(context.Context, string, string) error { return nil }}
	srv := httptest.NewServer(mcpserver.New(registry.New(registrytest.OpenRelay(t)), cap.NewHost(countSource{agent}, cap.Options{}), opts))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp/agents/" + agent
}

// tools/list advertises the output schema (inside the InvokeResult that
// structuredContent carries) and leaves hidden tools out; every result is
// checked against it; an unknown tool is an InvokeResult NOT_FOUND, not a
// protocol error.
func TestAgentTools_OutputSchema(t *testing.T) {
	cs, err := connect(t, setupCount(t), token)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, cs); !slices.Equal(got, []string{"cap_count", "cap_liar"}) {
		t.Fatalf("tools %v: the hidden tool must not be listed", got)
	}
	listed, _ := cs.ListTools(context.Background(), nil)
	b, _ := json.Marshal(listed.Tools[0].OutputSchema)
	var schema struct {
		Properties struct {
			Output struct {
				AnyOf []json.RawMessage `json:"anyOf"`
			} `json:"output"`
		} `json:"properties"`
	}
	if json.Unmarshal(b, &schema) != nil || len(schema.Properties.Output.AnyOf) != 2 || !sameJSON(schema.Properties.Output.AnyOf[0], countSchema) {
		t.Errorf("outputSchema = %s", b)
	}
	if res, out := call(t, cs, "cap_count", map[string]any{"text": "a b"}); res.IsError || out["ok"] != true {
		t.Errorf("count: %v", out)
	}
	res, out := call(t, cs, "cap_liar", map[string]any{})
	if e, _ := out["error"].(map[string]any); !res.IsError || e["code"] != capabilities.CodeExecutionFailed {
		t.Errorf("liar: isError=%v %v", res.IsError, out)
	}
	for _, name := range []string{"nope", "cap_hidden"} {
		res, out := call(t, cs, name, map[string]any{})
		if e, _ := out["error"].(map[string]any); !res.IsError || e["code"] != capabilities.CodeNotFound || out["ok"] != false {
			t.Errorf("%s: isError=%v %v", name, res.IsError, out)
		}
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
