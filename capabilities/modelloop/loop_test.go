package modelloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
	"github.com/agentnode/agentnode/capabilities/modelloop"
)

// noteSchema is written the way ACP packages write it, $id included.
const noteSchema = `{"$id":"did:nuwa:state:note#v1","type":"object",
	"properties":{"title":{"type":"string","minLength":1},"body":{"type":"string"}},
	"required":["title"],"additionalProperties":false}`

var tools = []capabilities.ToolDef{
	{Name: "state.create", Description: "create a note", Parameters: json.RawMessage(noteSchema)},
	{Name: "state.delete", Description: "delete a note", Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)},
	{Name: "finish", Description: "end the capability"},
}

// recorder is a ToolCaller that records what ran.
type recorder struct {
	mu    sync.Mutex
	calls []string
	fn    func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
}

func (r *recorder) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	r.mu.Lock()
	r.calls = append(r.calls, name+" "+string(args))
	r.mu.Unlock()
	if r.fn != nil {
		return r.fn(ctx, name, args)
	}
	if name == "finish" {
		return json.RawMessage(`{"done":true,"summary":"bye"}`), nil
	}
	return json.RawMessage(`{"id":"n1"}`), nil
}

func (r *recorder) ran() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func client(t testing.TB, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func call(id, name, args string) llmtest.Step {
	return func(llmtest.Request) llmtest.Reply { return llmtest.Call(llmtest.ToolCall(id, name, args)) }
}

func answer(text string) llmtest.Step {
	return func(llmtest.Request) llmtest.Reply { return llmtest.Answer(text) }
}

// toolResult returns the content of the tool message answering id in r.
func toolResult(t *testing.T, r llmtest.Request, id string) map[string]any {
	t.Helper()
	for _, m := range r.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			var v map[string]any
			if m.Content == nil || json.Unmarshal([]byte(*m.Content), &v) != nil {
				t.Fatalf("tool message %s content is not a JSON object: %v", id, m.Content)
			}
			return v
		}
	}
	t.Fatalf("no tool message with tool_call_id %s in %+v", id, r.Messages)
	return nil
}

func errorCode(v map[string]any) string {
	e, _ := v["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func errorMessage(v map[string]any) string {
	e, _ := v["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

func TestRun_ToolThenAnswer(t *testing.T) {
	srv := llmtest.NewServer(t,
		func(r llmtest.Request) llmtest.Reply {
			if got, want := r.ToolNames(), []string{"state_create", "state_delete", "finish"}; !slices.Equal(got, want) {
				t.Errorf("tools offered = %v, want %v", got, want)
			}
			if r.Messages[0].Role != "system" || *r.Messages[0].Content != "You keep notes." ||
				r.Messages[1].Role != "user" || *r.Last().Content != "note: buy milk" {
				t.Errorf("first request messages = %+v", r.Messages)
			}
			return llmtest.Call(llmtest.ToolCall("call_1", "state_create", `{"title":"buy milk"}`))
		},
		func(r llmtest.Request) llmtest.Reply {
			asst := r.Messages[len(r.Messages)-2]
			if asst.Role != "assistant" || asst.ToolCalls[0].ID != "call_1" || asst.ToolCalls[0].Function.Name != "state_create" {
				t.Errorf("assistant turn sent back = %+v", asst)
			}
			if got := toolResult(t, r, "call_1"); got["id"] != "n1" {
				t.Errorf("tool result = %v", got)
			}
			if last := r.Last(); last.Name != "state_create" {
				t.Errorf("tool message name = %q, want the alias", last.Name)
			}
			return llmtest.Answer("Noted: buy milk.")
		},
	)
	exec := &recorder{}
	res, err := modelloop.Run(context.Background(), modelloop.Turn{
		Model: client(t, srv), System: "You keep notes.", User: "note: buy milk", Tools: tools, Exec: exec,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != "Noted: buy milk." || res.Steps != 2 || res.Done || res.Usage.TotalTokens != 30 {
		t.Errorf("result = %+v", res)
	}
	if got, want := exec.ran(), []string{`state.create {"title":"buy milk"}`}; !slices.Equal(got, want) {
		t.Errorf("executed %v, want %v", got, want)
	}
	roles := make([]string, len(res.Messages))
	for i, m := range res.Messages {
		roles[i] = m.Role
	}
	if want := []string{"user", "assistant", "tool", "assistant"}; !slices.Equal(roles, want) {
		t.Errorf("new messages = %v, want %v", roles, want)
	}
	rec := res.ToolCalls[0]
	if rec.Name != "state.create" || rec.ErrorCode != "" || string(rec.Result) != `{"id":"n1"}` || rec.Duration <= 0 {
		t.Errorf("record = %+v", rec)
	}
}

// Each refused call reaches the model as an error result and never runs.
func TestRun_RefusedCalls(t *testing.T) {
	tests := []struct {
		name, tool, args, code string
	}{
		{"denied by nudges", "state_delete", `{"id":"n1"}`, capabilities.CodePermissionDenied},
		{"unknown tool", "shell_exec", `{"cmd":"rm -rf /"}`, capabilities.CodeNotFound},
		{"arguments not JSON", "state_create", `{"title":`, capabilities.CodeInvalidInput},
		{"arguments fail the schema", "state_create", `{"title":"","color":"red"}`, capabilities.CodeInvalidInput},
		{"arguments missing a required field", "state_create", ``, capabilities.CodeInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent map[string]any
			srv := llmtest.NewServer(t, call("c1", tt.tool, tt.args), func(r llmtest.Request) llmtest.Reply {
				sent = toolResult(t, r, "c1")
				return llmtest.Answer("sorry")
			})
			exec := &recorder{}
			res, err := modelloop.Run(context.Background(), modelloop.Turn{
				Model: client(t, srv), User: "do it", Tools: tools, Exec: exec,
				Allowed: func(name string) bool { return name != "state.delete" },
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := errorCode(sent); got != tt.code {
				t.Errorf("model saw %v, want code %s", sent, tt.code)
			}
			if msg := errorMessage(sent); msg == "" {
				t.Errorf("error result without a message: %v", sent)
			}
			if ran := exec.ran(); len(ran) != 0 {
				t.Errorf("refused call executed: %v", ran)
			}
			if rec := res.ToolCalls[0]; rec.ErrorCode != tt.code || rec.Args != tt.args {
				t.Errorf("record = %+v", rec)
			}
		})
	}
}

func TestRun_SchemaMessageNamesTheField(t *testing.T) {
	var sent map[string]any
	srv := llmtest.NewServer(t, call("c1", "state_create", `{"title":42}`), func(r llmtest.Request) llmtest.Reply {
		sent = toolResult(t, r, "c1")
		return llmtest.Answer("ok")
	})
	if _, err := modelloop.Run(context.Background(), modelloop.Turn{Model: client(t, srv), User: "x", Tools: tools, Exec: &recorder{}}); err != nil {
		t.Fatal(err)
	}
	if msg := errorMessage(sent); !strings.Contains(msg, "/title") {
		t.Errorf("message %q does not point at /title", msg)
	}
}

func TestRun_ExecErrors(t *testing.T) {
	tests := []struct {
		name    string
		fn      func(ctx context.Context) (json.RawMessage, error)
		code    string
		message string // substring the model sees
		hidden  string // internal text the model must not see
	}{
		{"coded error passes through", func(context.Context) (json.RawMessage, error) {
			return nil, capabilities.Errorf(capabilities.CodeNotFound, "note n9 does not exist")
		}, capabilities.CodeNotFound, "note n9 does not exist", ""},
		{"plain error is EXECUTION_FAILED", func(context.Context) (json.RawMessage, error) {
			return nil, errors.New("dial tcp 10.0.0.7:5432: connection refused")
		}, capabilities.CodeExecutionFailed, "the tool failed", "10.0.0.7"},
		{"slow tool times out", func(ctx context.Context) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, capabilities.CodeTimeout, "timed out", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent map[string]any
			srv := llmtest.NewServer(t, call("c1", "state_create", `{"title":"t"}`), func(r llmtest.Request) llmtest.Reply {
				sent = toolResult(t, r, "c1")
				return llmtest.Answer("ok")
			})
			exec := &recorder{fn: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) { return tt.fn(ctx) }}
			_, err := modelloop.Run(context.Background(), modelloop.Turn{Model: client(t, srv), User: "x", Tools: tools,
				Exec: exec, ToolTimeout: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			msg := errorMessage(sent)
			if errorCode(sent) != tt.code || !strings.Contains(msg, tt.message) || (tt.hidden != "" && strings.Contains(msg, tt.hidden)) {
				t.Errorf("model saw %v, want code %s with %q", sent, tt.code, tt.message)
			}
		})
	}
}

func TestRun_RunawayStopsAtStepLimit(t *testing.T) {
	srv := llmtest.NewServer(t).Always(call("again", "state_create", `{"title":"loop"}`))
	exec := &recorder{}
	res, err := modelloop.Run(context.Background(), modelloop.Turn{Model: client(t, srv), User: "x", Tools: tools, Exec: exec, MaxSteps: 3})
	if !errors.Is(err, modelloop.ErrStepLimit) {
		t.Fatalf("err = %v, want ErrStepLimit", err)
	}
	if res == nil || res.Steps != 3 || len(srv.Requests()) != 3 || len(exec.ran()) != 3 || len(res.ToolCalls) != 3 {
		t.Fatalf("result = %+v after %d requests", res, len(srv.Requests()))
	}
	if n := len(res.Messages); n != 1+3*2 { // user + 3 x (assistant, tool)
		t.Errorf("partial transcript has %d messages, want 7", n)
	}
}

func TestRun_DefaultStepLimit(t *testing.T) {
	srv := llmtest.NewServer(t).Always(call("again", "finish", ``))
	res, err := modelloop.Run(context.Background(), modelloop.Turn{Model: client(t, srv), User: "x", Tools: tools, Exec: &recorder{}})
	if !errors.Is(err, modelloop.ErrStepLimit) || res.Steps != modelloop.DefaultMaxSteps {
		t.Errorf("err %v after %d steps", err, res.Steps)
	}
}

func TestRun_DoneResult(t *testing.T) {
	srv := llmtest.NewServer(t, call("c1", "finish", ``), answer("Bye."))
	res, err := modelloop.Run(context.Background(), modelloop.Turn{Model: client(t, srv), User: "that's all", Tools: tools, Exec: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Done || res.Answer != "Bye." {
		t.Errorf("Done = %v answer %q", res.Done, res.Answer)
	}
}

func TestRun_NotDoneWithoutDoneTrue(t *testing.T) {
	exec := &recorder{fn: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"done":false,"nested":{"done":true}}`), nil
	}}
	srv := llmtest.NewServer(t, call("c1", "finish", ``), answer("ok"))
	res, err := modelloop.Run(context.Background(), modelloop.Turn{Model: client(t, srv), User: "x", Tools: tools, Exec: exec})
	if err != nil || res.Done {
		t.Errorf("err %v, Done %v", err, res.Done)
	}
}

func TestRun_ServerErrorIsRetried(t *testing.T) {
	srv := llmtest.NewServer(t,
		func(llmtest.Request) llmtest.Reply { return llmtest.Error(500, "upstream hiccup") },
		answer("hello"),
	)
	res, err := modelloop.Run(context.Background(), modelloop.Turn{Model: client(t, srv), User: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != "hello" || res.Steps != 1 || len(srv.Requests()) != 2 {
		t.Errorf("answer %q, %d steps, %d requests", res.Answer, res.Steps, len(srv.Requests()))
	}
}

func TestRun_ModelErrorKeepsPartialTranscript(t *testing.T) {
	srv := llmtest.NewServer(t, call("c1", "state_create", `{"title":"a"}`),
		func(llmtest.Request) llmtest.Reply { return llmtest.Error(400, "context length exceeded") })
	res, err := modelloop.Run(context.Background(), modelloop.Turn{Model: client(t, srv), User: "x", Tools: tools, Exec: &recorder{}})
	var he *llm.HTTPError
	if !errors.As(err, &he) || he.Status != 400 || !strings.Contains(err.Error(), "context length exceeded") {
		t.Fatalf("err = %v", err)
	}
	if res.Steps != 2 || len(res.ToolCalls) != 1 || len(res.Messages) != 3 {
		t.Errorf("partial result = %+v", res)
	}
}

func TestRun_HistoryIsSent(t *testing.T) {
	history := []llm.Message{{Role: "user", Content: "earlier"}, {Role: "assistant", Content: "reply"}}
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		if len(r.Messages) != 3 || *r.Messages[0].Content != "earlier" || *r.Messages[2].Content != "now" {
			t.Errorf("messages = %+v", r.Messages)
		}
		return llmtest.Answer("ok")
	})
	if _, err := modelloop.Run(context.Background(), modelloop.Turn{Model: client(t, srv), History: history, User: "now"}); err != nil {
		t.Fatal(err)
	}
}

func TestRun_NoModel(t *testing.T) {
	if _, err := modelloop.Run(context.Background(), modelloop.Turn{User: "x"}); !errors.Is(err, modelloop.ErrNoModel) {
		t.Errorf("err = %v", err)
	}
}

// A tool whose schema does not compile (here: a $ref to a valid schema
// file, which the loop refuses to load from disk) is never executed.
func TestRun_BrokenSchemaIsNotExecuted(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(file, []byte(`{"type":"object"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := []capabilities.ToolDef{{Name: "read", Parameters: json.RawMessage(`{"$ref":"file://` + file + `"}`)}}
	var sent map[string]any
	srv := llmtest.NewServer(t, call("c1", "read", `{}`), func(r llmtest.Request) llmtest.Reply {
		sent = toolResult(t, r, "c1")
		return llmtest.Answer("ok")
	})
	exec := &recorder{}
	if _, err := modelloop.Run(context.Background(), modelloop.Turn{Model: client(t, srv), User: "x", Tools: broken, Exec: exec}); err != nil {
		t.Fatal(err)
	}
	if errorCode(sent) != capabilities.CodeExecutionFailed || len(exec.ran()) != 0 {
		t.Errorf("model saw %v; executed %v", sent, exec.ran())
	}
}

// Concurrent turns share one client and the schema cache (run with -race).
func TestRun_Concurrent(t *testing.T) {
	srv := llmtest.NewServer(t).Always(func(r llmtest.Request) llmtest.Reply {
		if r.Last().Role == "tool" {
			return llmtest.Answer("ok")
		}
		return llmtest.Call(llmtest.ToolCall("c1", "state_create", `{"title":"t"}`))
	})
	c := client(t, srv)
	exec := &recorder{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			res, err := modelloop.Run(context.Background(), modelloop.Turn{Model: c, User: "x", Tools: tools, Exec: exec})
			if err != nil || res.Answer != "ok" || res.ToolCalls[0].ErrorCode != "" {
				t.Errorf("err %v result %+v", err, res)
			}
		})
	}
	wg.Wait()
	if n := len(exec.ran()); n != 8 {
		t.Errorf("%d tool calls executed, want 8", n)
	}
}

// ctx ending while tools run ends the turn: the next call does not run.
func TestRun_ContextEndsTurn(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Call(llmtest.ToolCall("c1", "state_create", `{"title":"a"}`), llmtest.ToolCall("c2", "state_create", `{"title":"b"}`))
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exec := &recorder{fn: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		cancel()
		return json.RawMessage(`{}`), nil
	}}
	res, err := modelloop.Run(ctx, modelloop.Turn{Model: client(t, srv), User: "x", Tools: tools, Exec: exec})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := len(exec.ran()); n != 1 {
		t.Errorf("%d calls executed, want 1", n)
	}
	// every call of the assistant turn is still answered in the transcript
	if len(res.ToolCalls) != 2 || res.ToolCalls[1].ErrorCode != capabilities.CodeExecutionFailed {
		t.Errorf("records = %+v", res.ToolCalls)
	}
	if n := len(res.Messages); n != 4 || res.Messages[3].ToolCallID != "c2" { // user, assistant, tool, tool
		t.Errorf("transcript = %+v", res.Messages)
	}
}
