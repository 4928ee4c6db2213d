package bindings_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/bindings"
)

// newRunner returns a Runner closed at the end of the test.
func newRunner(t *testing.T, cfg bindings.Config) *bindings.Runner {
	t.Helper()
	r := bindings.New(cfg)
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Logf("close runner: %v", err)
		}
	})
	return r
}

// call runs one binding call with a test deadline.
func call(t *testing.T, r *bindings.Runner, b acp.Binding, args string) (json.RawMessage, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return r.Call(ctx, bindings.Call{Agent: "aa", Tool: "t", Binding: b, Args: json.RawMessage(args)})
}

// wantCode fails unless err is a *capabilities.Error with code.
func wantCode(t *testing.T, err error, code string) *capabilities.Error {
	t.Helper()
	var ce *capabilities.Error
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v (%T), want a *capabilities.Error %s", err, err, code)
	}
	if ce.Code != code {
		t.Fatalf("code = %s (%s), want %s", ce.Code, ce.Message, code)
	}
	return ce
}

// mustJSON compares JSON documents semantically.
func mustJSON(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("result %s is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %s: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("result = %s, want %s", gb, wb)
	}
}
