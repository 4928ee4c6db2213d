package modelloop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
	"github.com/agentnode/agentnode/capabilities/modelloop"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current transcripts")

// TestRun_GoldenTranscript pins the wire requests (bytes as sent, indented)
// of one turn: a valid
// call, then an unknown and a denied call in one step, then the answer.
func TestRun_GoldenTranscript(t *testing.T) {
	srv := llmtest.NewServer(t,
		call("call_1", "state_create", `{"title":"buy milk"}`),
		func(llmtest.Request) llmtest.Reply {
			return llmtest.Call(llmtest.ToolCall("call_2", "shell", `{}`), llmtest.ToolCall("call_3", "state_delete", `{"id":"n1"}`))
		},
		answer("Noted: buy milk."),
	)
	_, err := modelloop.Run(context.Background(), modelloop.Turn{
		Model: client(t, srv), System: "You keep notes.", User: "note: buy milk", Tools: tools, Exec: &recorder{},
		Allowed: func(name string) bool { return name != "state.delete" },
	})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	for i, r := range srv.Requests() {
		fmt.Fprintf(&got, "-- request %d --\n", i+1)
		if err := json.Indent(&got, r.Raw, "", "  "); err != nil {
			t.Fatal(err)
		}
		got.WriteByte('\n')
	}
	compareGolden(t, filepath.Join("testdata", "turn.golden"), got.Bytes())
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("transcript differs from %s (run with -update after checking):\n%s", path, got)
	}
}
