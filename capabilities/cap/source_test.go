package cap_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/cap"
)

// notePackage is the spec's note example, reduced: a schema, a prompt and
// two tools (one using {$ref: "#/schema"}).
func notePackage() *acp.Package {
	return &acp.Package{
		Metadata: acp.Metadata{ID: "did:nuwa:cap:note@1.2.0", Name: "Note", Description: "Create notes",
			Permissions: acp.Permissions{Require: []string{"state.create"}}},
		Schema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"did:nuwa:state:note#v1","type":"object",` +
			`"properties":{"title":{"type":"string"},"body":{"type":"string"}},"required":["title","body"]}`),
		Prompt: "You are Note Assistant.",
		Tools: []acp.Tool{
			{Type: "function", Function: acp.Function{Name: "state.create", Description: "Persist a note",
				Parameters: json.RawMessage(`{"type":"object","properties":{"schema_uri":{"type":"string"},"object":{"$ref":"#/schema"}},"required":["schema_uri","object"]}`)}},
			{Type: "function", Function: acp.Function{Name: "word_count", Description: "Count words",
				Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}},
		},
	}
}

// toolSource is a Source with real in-process tool functions, keyed by
// capability id, for one agent.
type toolSource struct {
	agent string
	caps  []cap.Capability
	runs  atomic.Int64
}

type runFunc func(ctx context.Context, input json.RawMessage) (json.RawMessage, error)

func (s *toolSource) Capabilities(_ context.Context, agent string) ([]cap.Capability, error) {
	if agent != s.agent {
		return nil, capabilities.Errorf(capabilities.CodeNotFound, "no agent %s", agent)
	}
	return s.caps, nil
}

func (s *toolSource) Run(ctx context.Context, _ string, c cap.Capability, input json.RawMessage) (json.RawMessage, error) {
	s.runs.Add(1)
	fn, ok := c.Impl.(runFunc)
	if !ok {
		return nil, errors.New("no implementation")
	}
	return fn(ctx, input)
}

func (s *toolSource) add(m cap.Manifest, fn runFunc) {
	s.caps = append(s.caps, cap.Capability{Manifest: m, Impl: fn})
}

func toolManifest(id, version, input, output string) cap.Manifest {
	m := cap.Manifest{CapabilityID: id, Version: version, Kind: cap.KindTool, Name: id, InputSchema: json.RawMessage(input)}
	if output != "" {
		m.OutputSchema = json.RawMessage(output)
	}
	return m
}

const agentA = "a000000000000000000000000000000000000000000000000000000000000001"

// newSource has: word_count (a real tool), slow (waits for its deadline),
// fails (plain error with internal text), denied (coded error), liar
// (output violates its output_schema), garbage (non-JSON output), and two
// versions of versioned.
func newSource() *toolSource {
	s := &toolSource{agent: agentA}
	s.add(toolManifest("cap:word_count", "1.0.0",
		`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`,
		`{"type":"object","properties":{"words":{"type":"integer"}},"required":["words"]}`), wordCount)
	s.add(toolManifest("cap:slow", "1.0.0", `{"type":"object"}`, ""), func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	s.add(toolManifest("cap:fails", "1.0.0", `{"type":"object"}`, ""), func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("connect to 10.0.0.7:5432: password authentication failed")
	})
	s.add(toolManifest("cap:denied", "1.0.0", `{"type":"object"}`, ""), func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, capabilities.Errorf(capabilities.CodePermissionDenied, "state.delete is not granted")
	})
	s.add(toolManifest("cap:liar", "1.0.0", `{"type":"object"}`, `{"type":"object","required":["words"]}`),
		func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"nope":1}`), nil
		})
	s.add(toolManifest("cap:garbage", "1.0.0", `{"type":"object"}`, ""),
		func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{not json`), nil
		})
	for _, v := range []string{"1.10.0", "1.9.0", "2.0.0-rc.1"} {
		version := v
		s.add(toolManifest("cap:versioned", version, `{"type":"object"}`, ""),
			func(context.Context, json.RawMessage) (json.RawMessage, error) {
				return json.Marshal(map[string]string{"version": version})
			})
	}
	return s
}

func wordCount(_ context.Context, input json.RawMessage) (json.RawMessage, error) {
	var in struct{ Text string }
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, err
	}
	n, inWord := 0, false
	for _, r := range in.Text {
		if r == ' ' || r == '\n' || r == '\t' {
			inWord = false
		} else if !inWord {
			inWord, n = true, n+1
		}
	}
	return json.Marshal(map[string]int{"words": n})
}
