package modelloop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/llm"
)

// runCalls runs the model's tool calls in order and returns one tool
// message per call. It records each call in res. The error is non-nil
// only when ctx ended: the turn cannot go on, and the calls not run yet
// get a "not run" error result, so the transcript still answers every
// call.
func runCalls(ctx context.Context, t Turn, ts *toolset, calls []llm.ToolCall, res *Result) ([]llm.Message, error) {
	out := make([]llm.Message, 0, len(calls))
	var ended error
	for _, tc := range calls {
		var rec ToolCallRecord
		if ended = context.Cause(ctx); ended != nil {
			rec = notRun(tc, ended)
		} else {
			rec = runCall(ctx, t, ts, tc)
			res.Done = res.Done || (rec.ErrorCode == "" && isDone(rec.Result))
		}
		res.ToolCalls = append(res.ToolCalls, rec)
		out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: string(rec.Result)})
	}
	return out, ended
}

// notRun is the record of a call skipped because the turn ended.
func notRun(tc llm.ToolCall, cause error) ToolCallRecord {
	e := &capabilities.Error{Code: capabilities.CodeOf(cause), Message: "the turn ended before this call ran"}
	return ToolCallRecord{ID: tc.ID, Name: tc.Name, Args: tc.Arguments, ErrorCode: e.Code, Result: errorResult(e)}
}

// runCall checks and executes one call; every failure becomes a coded
// error result for the model.
func runCall(ctx context.Context, t Turn, ts *toolset, tc llm.ToolCall) ToolCallRecord {
	start := time.Now()
	rec := ToolCallRecord{ID: tc.ID, Name: tc.Name, Args: tc.Arguments}
	args, cerr := ts.check(tc.Name, tc.Arguments)
	var result json.RawMessage
	if cerr == nil {
		result, cerr = execute(ctx, t, tc.Name, args)
	}
	if cerr != nil {
		rec.ErrorCode, rec.Result = cerr.Code, errorResult(cerr)
	} else {
		rec.Result = result
	}
	rec.Duration = time.Since(start)
	return rec
}

// execute calls Exec under ToolTimeout. Only a *capabilities.Error's
// message reaches the model; other errors are reported by code.
func execute(ctx context.Context, t Turn, name string, args json.RawMessage) (json.RawMessage, *capabilities.Error) {
	if t.Exec == nil {
		return nil, &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: "no tool executor is configured", Err: ErrNoExec}
	}
	ctx, cancel := context.WithTimeout(ctx, t.ToolTimeout)
	defer cancel()
	out, err := t.Exec.CallTool(ctx, name, args)
	if err != nil {
		return nil, toolError(err, t.ToolTimeout)
	}
	return asJSON(out), nil
}

// toolError names no tool: the model knows it by its alias, and the
// result's tool_call_id already says which call failed.
func toolError(err error, timeout time.Duration) *capabilities.Error {
	var ce *capabilities.Error
	if errors.As(err, &ce) {
		return ce
	}
	if capabilities.CodeOf(err) == capabilities.CodeTimeout {
		return &capabilities.Error{Code: capabilities.CodeTimeout, Message: "the tool timed out after " + timeout.String(), Err: err}
	}
	return &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: "the tool failed", Err: err}
}

// asJSON returns out, or out as a JSON string when it is not JSON, or
// null when empty: the tool message always carries JSON.
func asJSON(out json.RawMessage) json.RawMessage {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return json.RawMessage("null")
	}
	if json.Valid(out) {
		return out
	}
	s, _ := json.Marshal(string(out))
	return s
}

// errorResult is the tool message content for a failed call.
func errorResult(e *capabilities.Error) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": e.Code, "message": e.Message}})
	return b
}

// isDone reports whether a result is an object with "done": true.
func isDone(result json.RawMessage) bool {
	var obj struct {
		Done bool `json:"done"`
	}
	return json.Unmarshal(result, &obj) == nil && obj.Done
}
