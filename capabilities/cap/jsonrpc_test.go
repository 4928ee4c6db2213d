package cap_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/jsonrpc"
)

type agentCtxKey struct{}

// newRPC serves the CAP binding over HTTP; the agent comes from the
// X-Agent header (as serve would take it from the path or the token).
func newRPC(t *testing.T) string {
	t.Helper()
	s := jsonrpc.NewServer(jsonrpc.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	cap.RegisterJSONRPC(s, cap.NewHost(newSource(), cap.Options{}), func(ctx context.Context) (string, error) {
		a, _ := ctx.Value(agentCtxKey{}).(string)
		return a, nil
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), agentCtxKey{}, r.Header.Get("X-Agent"))))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func rpc(t *testing.T, url, agent, body string) map[string]json.RawMessage {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if agent != "" {
		req.Header.Set("X-Agent", agent)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRegisterJSONRPC(t *testing.T) {
	url := newRPC(t)
	tests := []struct {
		name, agent, body, want string
		key                     string // "result" or "error"
	}{
		{"invoke ok", agentA, `{"jsonrpc":"2.0","id":1,"method":"capability.invoke","params":{"ref":{"capability_id":"cap:word_count","version":"1.0.0"},"input":{"text":"a b"}}}`,
			`{"ok":true,"output":{"words":2},"error":null,"duration_ms":`, "result"},
		{"invoke invalid input is a result", agentA, `{"jsonrpc":"2.0","id":2,"method":"capability.invoke","params":{"ref":{"capability_id":"cap:word_count","version":"1.0.0"},"input":{"text":1}}}`,
			`INVALID_INPUT`, "result"},
		{"invoke without ref", agentA, `{"jsonrpc":"2.0","id":3,"method":"capability.invoke","params":{"input":{}}}`,
			`{"code":-32602,"message":"invalid params: ref.capability_id is required"}`, "error"},
		{"describe", agentA, `{"jsonrpc":"2.0","id":4,"method":"capability.describe","params":{"capability_id":"cap:versioned","version":"1.9.0"}}`,
			`"version":"1.9.0"`, "result"},
		{"describe not found", agentA, `{"jsonrpc":"2.0","id":5,"method":"capability.describe","params":{"capability_id":"cap:nope","version":"1.0.0"}}`,
			`{"code":-32014,"message":"NOT_FOUND: no capability \"cap:nope\" version \"1.0.0\"","data":{"cap_code":"NOT_FOUND"}}`, "error"},
		{"list", agentA, `{"jsonrpc":"2.0","id":6,"method":"capability.list"}`, `"capability_id":"cap:word_count"`, "result"},
		{"list by params agent", "", `{"jsonrpc":"2.0","id":7,"method":"capability.list","params":{"agent":"` + agentA + `"}}`, `"capability_id":"cap:slow"`, "result"},
		{"no agent", "", `{"jsonrpc":"2.0","id":8,"method":"capability.list","params":{}}`,
			`{"code":-32602,"message":"invalid params: agent is required"}`, "error"},
		{"other agent refused", agentA, `{"jsonrpc":"2.0","id":9,"method":"capability.list","params":{"agent":"b0"}}`,
			`"cap_code":"PERMISSION_DENIED"`, "error"},
		{"positional params refused", agentA, `{"jsonrpc":"2.0","id":10,"method":"capability.list","params":["x"]}`,
			`{"code":-32602,"message":"invalid params: params must be an object"}`, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := rpc(t, url, tt.agent, tt.body)
			got := string(out[tt.key])
			if got == "" {
				t.Fatalf("no %s in %v", tt.key, out)
			}
			if strings.HasPrefix(tt.want, "{") && tt.key == "error" {
				if got != tt.want {
					t.Errorf("got  %s\nwant %s", got, tt.want)
				}
			} else if !strings.Contains(got, tt.want) {
				t.Errorf("got %s, want it to contain %s", got, tt.want)
			}
		})
	}
}

func TestHandler(t *testing.T) {
	host := cap.NewHost(newSource(), cap.Options{})
	mux := http.NewServeMux()
	mux.Handle("/cap/agents/{agent}", cap.Handler(host, func(r *http.Request, agent string) error {
		if r.Header.Get("Authorization") != "Bearer ok" {
			return errors.New("no")
		}
		return nil
	}, jsonrpc.Options{}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"capability.describe","params":{"capability_id":"cap:slow","version":"1.0.0"}}`
	for _, tc := range []struct {
		auth, agent string
		status      int
		want        string
	}{
		{"Bearer ok", agentA, 200, `"capability_id":"cap:slow"`},
		{"Bearer ok", "someone", 200, `"cap_code":"NOT_FOUND"`},
		{"", agentA, 401, ""},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/cap/agents/"+tc.agent, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s %q: got %d %s, want %d with %s", tc.agent, tc.auth, resp.StatusCode, out, tc.status, tc.want)
		}
	}
}
