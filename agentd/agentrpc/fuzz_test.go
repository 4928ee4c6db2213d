package agentrpc_test

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzHandle feeds arbitrary bodies to the endpoint's core, seeded with the
// conformance transcripts' requests: every answer is valid JSON-RPC (or
// nothing, for notifications), and nothing panics.
func FuzzHandle(f *testing.F) {
	for _, file := range []string{"220-message-local", "270-delegate-local", "530-batch", "460-tools-agentSearch", "090-parse-error"} {
		s := readStepFile(f, "testdata/conformance/"+file+".json")
		if s.Raw != nil {
			f.Add([]byte(*s.Raw))
		} else {
			f.Add([]byte(s.Request))
		}
	}
	fx := newFixture(f)
	srv := fx.svc.Server()
	f.Fuzz(func(t *testing.T, body []byte) {
		out := srv.Handle(context.Background(), body)
		if out != nil && !json.Valid(out) {
			t.Fatalf("invalid JSON answer %q to %q", out, body)
		}
	})
}
