package modelloop_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
	"github.com/agentnode/agentnode/capabilities/modelloop"
)

const benchToolSteps = 4

// scriptedSteps calls state.create until the conversation holds
// benchToolSteps tool results, then answers.
func scriptedSteps(r llmtest.Request) llmtest.Reply {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "tool" {
			n++
		}
	}
	if n < benchToolSteps {
		return llmtest.Call(llmtest.ToolCall("c"+strconv.Itoa(n), "state_create", `{"title":"milk","body":"two litres"}`))
	}
	return llmtest.Answer("done")
}

func benchRun(b *testing.B, model modelloop.Completer) {
	exec := &recorder{fn: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"id":"n1"}`), nil
	}}
	turn := modelloop.Turn{Model: model, System: "You keep notes.", User: "note milk", Tools: tools, Exec: exec}
	b.ReportAllocs()
	for b.Loop() {
		res, err := modelloop.Run(context.Background(), turn)
		if err != nil || res.Steps != benchToolSteps+1 {
			b.Fatalf("err %v, steps %d", err, res.Steps)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchToolSteps), "ns/toolstep")
}

// BenchmarkRun_HTTP: a turn of four tool steps and an answer through the
// real llm.Client against the scripted server on loopback.
func BenchmarkRun_HTTP(b *testing.B) {
	srv := llmtest.NewServer(b).Always(scriptedSteps)
	benchRun(b, client(b, srv))
}

// memModel answers like the scripted server, without HTTP or JSON: what
// is left is the loop's own cost (schema checks, records, messages).
type memModel struct{}

func (memModel) Complete(_ context.Context, req llm.Request) (*llm.Response, error) {
	n := 0
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool {
			n++
		}
	}
	msg := llm.Message{Role: llm.RoleAssistant, Content: "done"}
	if n < benchToolSteps {
		msg = llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c" + strconv.Itoa(n), Name: "state.create", Arguments: `{"title":"milk","body":"two litres"}`}}}
	}
	return &llm.Response{Message: msg}, nil
}

// BenchmarkRun_InMemory: the same turn with an in-process model.
func BenchmarkRun_InMemory(b *testing.B) {
	benchRun(b, memModel{})
}
