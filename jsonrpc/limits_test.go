package jsonrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentnode/agentnode/jsonrpc"
)

// rpcAnswer is one decoded response.
type rpcAnswer struct {
	ID    json.RawMessage `json:"id"`
	Error *jsonrpc.Error  `json:"error"`
}

// limitedServer answers "big" with a 1,000-byte string and counts its calls.
func limitedServer(maxBatch, maxResponse int) (*httptest.Server, *atomic.Int64) {
	s := jsonrpc.NewServer(jsonrpc.Options{MaxBatch: maxBatch, MaxResponseBytes: maxResponse, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var calls atomic.Int64
	s.Register("big", func(context.Context, json.RawMessage) (any, error) {
		calls.Add(1)
		return strings.Repeat("x", 1000), nil
	})
	return httptest.NewServer(s), &calls
}

func batchOf(n int, entry func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = entry(i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// TestServer_batchLimit: the /acp finding (a 1 MiB batch of 1s answered
// with 42 MB). A batch over MaxBatch runs nothing and gets one -32600
// error object naming the limit; a batch at the limit runs.
func TestServer_batchLimit(t *testing.T) {
	srv, calls := limitedServer(10, 0)
	defer srv.Close()

	ones := "[" + strings.TrimSuffix(strings.Repeat("1,", 512<<10-8), ",") + "]" // just under 1 MiB of 1s
	for name, body := range map[string]string{
		"ones":     ones,
		"11 calls": batchOf(11, func(i int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","method":"big","id":%d}`, i) }),
	} {
		got := post(t, srv.URL, "application/json", body)
		var one rpcAnswer
		if err := json.Unmarshal(got.Body, &one); err != nil || one.Error == nil {
			t.Fatalf("%s: %d %.200s: want one error object", name, got.Status, got.Body)
		}
		if one.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(one.Error.Message, "at most 10 entries") {
			t.Errorf("%s: error %+v, want -32600 naming the limit", name, one.Error)
		}
		if len(got.Body) > 200 {
			t.Errorf("%s: answer of %d bytes, want one short error", name, len(got.Body))
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("refused batches ran %d calls, want 0", n)
	}
	got := post(t, srv.URL, "application/json", batchOf(10, func(i int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","method":"big","id":%d}`, i) }))
	var all []rpcAnswer
	if err := json.Unmarshal(got.Body, &all); err != nil || len(all) != 10 {
		t.Fatalf("batch at the limit: %d answers (%v), want 10", len(all), err)
	}
}

// TestServer_responseLimit: a result that does not fit MaxResponseBytes is
// replaced by -32600 with its id; in a batch, the entries after it do not
// run and get the same error; notifications get nothing.
func TestServer_responseLimit(t *testing.T) {
	srv, calls := limitedServer(0, 2500) // two results fit, the third does not
	defer srv.Close()
	body := batchOf(5, func(i int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","method":"big","id":%d}`, i) })
	body = strings.TrimSuffix(body, "]") + `,{"jsonrpc":"2.0","method":"big"}]` // a notification at the end
	got := post(t, srv.URL, "application/json", body)
	var all []rpcAnswer
	if err := json.Unmarshal(got.Body, &all); err != nil {
		t.Fatalf("%d %.300s: %v", got.Status, got.Body, err)
	}
	if len(all) != 5 {
		t.Fatalf("%d answers, want 5 (one per id)", len(all))
	}
	for i, a := range all {
		wantErr := i >= 2
		if (a.Error != nil) != wantErr || string(a.ID) != fmt.Sprint(i) {
			t.Errorf("answer %d: id %s error %+v; want error: %v", i, a.ID, a.Error, wantErr)
		}
		if a.Error != nil && (a.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(a.Error.Message, "exceed 2500 bytes")) {
			t.Errorf("answer %d: %+v, want -32600 naming the limit", i, a.Error)
		}
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d calls ran, want 3 (two that fit, the one that overflowed; none after)", n)
	}

	single, _ := limitedServer(0, 500)
	defer single.Close()
	got = post(t, single.URL, "application/json", `{"jsonrpc":"2.0","method":"big","id":"s"}`)
	var one rpcAnswer
	if err := json.Unmarshal(got.Body, &one); err != nil || one.Error == nil || one.Error.Code != jsonrpc.CodeInvalidRequest || string(one.ID) != `"s"` {
		t.Fatalf("single over the limit: %d %s, want -32600 with id \"s\"", got.Status, got.Body)
	}
	if got.Status != http.StatusOK {
		t.Errorf("status %d, want 200 (the error is JSON-RPC's)", got.Status)
	}
}
