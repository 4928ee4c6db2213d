package jsonrpc_test

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzServer_Handle: whatever the bytes, Handle does not panic and answers
// nothing (notifications only) or valid JSON.
func FuzzServer_Handle(f *testing.F) {
	for _, c := range httpCases {
		f.Add([]byte(c.body))
	}
	s := newTestServer(0)
	f.Fuzz(func(t *testing.T, msg []byte) {
		out := s.Handle(context.Background(), msg)
		if out != nil && !json.Valid(out) {
			t.Fatalf("Handle(%q) = %q: not JSON", msg, out)
		}
	})
}
