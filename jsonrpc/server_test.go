package jsonrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/jsonrpc"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.json from the current responses")

// errApp is an application error that MapError turns into -32001.
var errApp = errors.New("app: payload invalid (internal detail)")

func newTestServer(max int64) *jsonrpc.Server {
	s := jsonrpc.NewServer(jsonrpc.Options{
		MaxRequestBytes: max,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		MapError: func(err error) *jsonrpc.Error {
			if errors.Is(err, errApp) {
				return &jsonrpc.Error{Code: -32001, Message: "invalid payload structure", Data: map[string]string{"expected": "task"}}
			}
			return nil
		},
	})
	s.Register("echo", func(_ context.Context, p json.RawMessage) (any, error) { return p, nil })
	s.Register("sum", sum)
	s.Register("coded", func(context.Context, json.RawMessage) (any, error) {
		return nil, jsonrpc.InvalidParams("want a and b")
	})
	s.Register("mapped", func(context.Context, json.RawMessage) (any, error) { return nil, errApp })
	s.Register("fails", func(context.Context, json.RawMessage) (any, error) {
		return nil, errors.New("db password is hunter2")
	})
	s.Register("panics", func(context.Context, json.RawMessage) (any, error) { panic("secret panic text") })
	s.Register("nothing", func(context.Context, json.RawMessage) (any, error) { return nil, nil })
	return s
}

// sum adds a and b, by name ({"a":1,"b":2}) or by position ([1,2]).
func sum(_ context.Context, p json.RawMessage) (any, error) {
	var pos []float64
	if json.Unmarshal(p, &pos) == nil && len(pos) == 2 {
		return pos[0] + pos[1], nil
	}
	var named struct{ A, B *float64 }
	if json.Unmarshal(p, &named) == nil && named.A != nil && named.B != nil {
		return *named.A + *named.B, nil
	}
	return nil, jsonrpc.InvalidParams("want [a, b] or {a, b}")
}

// httpCase is one raw POST and the raw answer it must get.
type httpCase struct {
	name, body string
}

var httpCases = []httpCase{
	{"by_name", `{"jsonrpc":"2.0","method":"sum","params":{"a":1,"b":2},"id":1}`},
	{"by_position", `{"jsonrpc":"2.0","method":"sum","params":[40,2],"id":"x"}`},
	{"params_passed_raw", `{"jsonrpc":"2.0","method":"echo","params":{"z":[1,{"y":null}]},"id":2}`},
	{"no_params", `{"jsonrpc":"2.0","method":"echo","id":3}`},
	{"null_result", `{"jsonrpc":"2.0","method":"nothing","id":4}`},
	{"null_id", `{"jsonrpc":"2.0","method":"echo","params":[1],"id":null}`},
	{"notification", `{"jsonrpc":"2.0","method":"echo","params":[1]}`},
	{"notification_of_failing_method", `{"jsonrpc":"2.0","method":"fails"}`},
	{"parse_error", `{"jsonrpc":"2.0","method":"echo",`},
	{"wrong_version", `{"jsonrpc":"1.0","method":"echo","id":5}`},
	{"no_method", `{"jsonrpc":"2.0","id":6}`},
	{"method_not_string", `{"jsonrpc":"2.0","method":7,"id":7}`},
	{"object_id", `{"jsonrpc":"2.0","method":"echo","id":{"a":1}}`},
	{"string_params", `{"jsonrpc":"2.0","method":"echo","params":"x","id":8}`},
	{"not_an_object", `42`},
	{"method_not_found", `{"jsonrpc":"2.0","method":"nope","id":9}`},
	{"invalid_params", `{"jsonrpc":"2.0","method":"sum","params":{"a":1},"id":10}`},
	{"coded_error", `{"jsonrpc":"2.0","method":"coded","id":11}`},
	{"app_error", `{"jsonrpc":"2.0","method":"mapped","id":12}`},
	{"internal_error_hides_text", `{"jsonrpc":"2.0","method":"fails","id":13}`},
	{"panic_hides_text", `{"jsonrpc":"2.0","method":"panics","id":14}`},
	{"batch", `[{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"echo","params":[0]},{"jsonrpc":"2.0","method":"nope","id":2},1]`},
	{"batch_all_notifications", `[{"jsonrpc":"2.0","method":"echo"},{"jsonrpc":"2.0","method":"sum","params":[1,2]}]`},
	{"batch_empty", `[]`},
	{"batch_invalid_items", `[1,2]`},
	{"batch_parse_error", `[{"jsonrpc":"2.0","method":"echo","id":1},`},
}

// exchange is the golden record of one case: status and raw body.
type exchange struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body,omitempty"`
}

func TestServer_ServeHTTP_golden(t *testing.T) {
	srv := httptest.NewServer(newTestServer(0))
	defer srv.Close()
	got := map[string]exchange{}
	for _, c := range httpCases {
		got[c.name] = post(t, srv.URL, "application/json", c.body)
	}
	path := filepath.Join("testdata", "golden.json")
	if *update {
		writeGolden(t, path, got)
	}
	want := readGolden(t, path)
	for _, c := range httpCases {
		g, w := got[c.name], want[c.name]
		if g.Status != w.Status || !jsonEqual(g.Body, w.Body) {
			t.Errorf("%s: %s\n got %d %s\nwant %d %s", c.name, c.body, g.Status, g.Body, w.Status, w.Body)
		}
	}
	if len(want) != len(httpCases) {
		t.Errorf("golden has %d cases, the table %d: run with -update", len(want), len(httpCases))
	}
}

func TestServer_ServeHTTP_hidesInternalText(t *testing.T) {
	srv := httptest.NewServer(newTestServer(0))
	defer srv.Close()
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"fails","id":1}`,
		`{"jsonrpc":"2.0","method":"panics","id":1}`,
		`{"jsonrpc":"2.0","method":"mapped","id":1}`,
	} {
		got := post(t, srv.URL, "application/json", body)
		for _, secret := range []string{"hunter2", "secret panic", "internal detail"} {
			if bytes.Contains(got.Body, []byte(secret)) {
				t.Errorf("%s: response %s leaks %q", body, got.Body, secret)
			}
		}
	}
}

func TestServer_ServeHTTP_transport(t *testing.T) {
	srv := httptest.NewServer(newTestServer(64))
	defer srv.Close()
	big := `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", 100) + `"],"id":1}`
	if got := post(t, srv.URL, "application/json", big); got.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: got %d %s, want 413", got.Status, got.Body)
	}
	if got := post(t, srv.URL, "text/plain", `{}`); got.Status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: got %d, want 415", got.Status)
	}
	if got := post(t, srv.URL, "application/json; charset=utf-8", `{"jsonrpc":"2.0","method":"echo","id":1}`); got.Status != http.StatusOK {
		t.Errorf("json with charset: got %d, want 200", got.Status)
	}
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: got %d, want 405", resp.StatusCode)
	}
}

func post(t *testing.T, url, contentType, body string) exchange {
	t.Helper()
	resp, err := http.Post(url, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ex := exchange{Status: resp.StatusCode}
	if len(b) > 0 && json.Valid(b) {
		ex.Body = b
	}
	return ex
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}

func writeGolden(t *testing.T, path string, got map[string]exchange) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readGolden(t *testing.T, path string) map[string]exchange {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	var want map[string]exchange
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	return want
}

func TestServer_Handle_fallbackServesUnregisteredMethods(t *testing.T) {
	s := jsonrpc.NewServer(jsonrpc.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Fallback: func(_ context.Context, method string, _ json.RawMessage) (any, error) {
			if method == "tool" {
				return "from the fallback", nil
			}
			return nil, fmt.Errorf("%w: %s", jsonrpc.ErrMethodNotFound, method)
		},
	})
	s.Register("echo", func(context.Context, json.RawMessage) (any, error) { return "registered", nil })
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"echo"}`: `{"jsonrpc":"2.0","id":1,"result":"registered"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tool"}`: `{"jsonrpc":"2.0","id":1,"result":"from the fallback"}`,
		`{"jsonrpc":"2.0","id":1,"method":"nope"}`: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found"}}`,
	} {
		if got := string(s.Handle(context.Background(), []byte(body))); got != want {
			t.Errorf("%s: got %s, want %s", body, got, want)
		}
	}
}
