package bindings_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/bindings"
)

// The OnCall hooks see every CallBinding with its outcome, in order, and
// the Runner keeps OutputSchema: the decoration is composed in, nothing
// wraps the runner.
func TestRunner_CallBinding_runsOnCallHooks(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	var seen []string
	hook := func(name string) func(context.Context, bindings.Call, error) {
		return func(_ context.Context, c bindings.Call, err error) {
			code := "ok"
			if err != nil {
				code = capabilities.CodeOf(err)
			}
			seen = append(seen, name+" "+c.Tool+" "+c.Binding.Type+" "+code)
		}
	}
	r := newRunner(t, bindings.Config{AllowPrivate: true, OnCall: []func(context.Context, bindings.Call, error){hook("a"), hook("b")}})
	ctx := context.Background()
	if _, err := r.CallBinding(ctx, "aa", "get", acp.Binding{Type: acp.BindHTTPGet, URL: srv.URL}, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	_, err := r.CallBinding(ctx, "aa", "odd", acp.Binding{Type: "carrier_pigeon"}, json.RawMessage(`{}`))
	wantCode(t, err, capabilities.CodeInvalidInput)
	want := []string{"a get http_get ok", "b get http_get ok", "a odd carrier_pigeon INVALID_INPUT", "b odd carrier_pigeon INVALID_INPUT"}
	if len(seen) != len(want) {
		t.Fatalf("hooks saw %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("hooks saw %q, want %q", seen, want)
		}
	}
	if schema, err := r.OutputSchema(ctx, acp.Binding{Type: acp.BindHTTPGet, URL: srv.URL}); err != nil || schema != nil {
		t.Fatalf("OutputSchema of an http_get binding = %s, %v; want none", schema, err)
	}
}
