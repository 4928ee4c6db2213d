package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentnode/agentnode/jsonrpc"
)

// The client against the package's own server over a real HTTP socket:
// a result, an application error with its code, a missing method, a header.
func TestHTTPClient_againstTheServer(t *testing.T) {
	s := jsonrpc.NewServer(jsonrpc.Options{})
	s.Register("echo", func(ctx context.Context, p json.RawMessage) (any, error) { return p, nil })
	s.Register("deny", func(ctx context.Context, p json.RawMessage) (any, error) {
		return nil, jsonrpc.Errorf(-32001, "no")
	})
	var seen string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Get("Authorization")
		s.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c := &jsonrpc.HTTPClient{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer t"}}}
	var got map[string]int
	if err := c.Call(context.Background(), "echo", map[string]int{"a": 1}, &got); err != nil || got["a"] != 1 {
		t.Fatalf("echo: %v %v", got, err)
	}
	if seen != "Bearer t" {
		t.Fatalf("header not sent: %q", seen)
	}
	var je *jsonrpc.Error
	if err := c.Call(context.Background(), "deny", nil, nil); !errors.As(err, &je) || je.Code != -32001 {
		t.Fatalf("deny: %v", err)
	}
	if err := c.Call(context.Background(), "nope", nil, nil); !errors.Is(err, jsonrpc.ErrMethodNotFound) {
		t.Fatalf("nope: %v", err)
	}
}

// A peer that answers something other than JSON-RPC, or too much, is an
// ErrBadResponse, not a hang or a huge read.
func TestHTTPClient_badAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Write(make([]byte, 2048))
			return
		}
		w.Write([]byte(`<html>`))
	}))
	defer srv.Close()
	for _, path := range []string{"/", "/big"} {
		c := &jsonrpc.HTTPClient{URL: srv.URL + path, MaxResponseBytes: 1024}
		if err := c.Call(context.Background(), "x", nil, nil); !errors.Is(err, jsonrpc.ErrBadResponse) {
			t.Fatalf("%s: %v", path, err)
		}
	}
}
