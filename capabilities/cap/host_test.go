package cap_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/cap"
)

func TestHost_Invoke(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		ref        cap.Ref
		input      string
		wantCode   string // "" = ok
		wantOutput string
		wantInMsg  string
	}{
		{"ok", cap.Ref{CapabilityID: "cap:word_count", Version: "1.0.0"}, `{"text":"three little words"}`, "", `{"words":3}`, ""},
		{"latest version", cap.Ref{CapabilityID: "cap:versioned"}, `{}`, "", `{"version":"1.10.0"}`, ""},
		{"exact version", cap.Ref{CapabilityID: "cap:versioned", Version: "2.0.0-rc.1"}, `{}`, "", `{"version":"2.0.0-rc.1"}`, ""},
		{"unknown id", cap.Ref{CapabilityID: "cap:nope", Version: "1.0.0"}, `{}`, capabilities.CodeNotFound, "", `"cap:nope"`},
		{"unknown version", cap.Ref{CapabilityID: "cap:word_count", Version: "9.9.9"}, `{}`, capabilities.CodeNotFound, "", `"9.9.9"`},
		{"missing property", cap.Ref{CapabilityID: "cap:word_count", Version: "1.0.0"}, `{}`, capabilities.CodeInvalidInput, "", "text"},
		{"wrong type", cap.Ref{CapabilityID: "cap:word_count", Version: "1.0.0"}, `{"text":5}`, capabilities.CodeInvalidInput, "", "/text"},
		{"extra property", cap.Ref{CapabilityID: "cap:word_count", Version: "1.0.0"}, `{"text":"a","x":1}`, capabilities.CodeInvalidInput, "", "x"},
		{"not an object", cap.Ref{CapabilityID: "cap:word_count", Version: "1.0.0"}, `[1]`, capabilities.CodeInvalidInput, "", "object"},
		{"empty input is {}", cap.Ref{CapabilityID: "cap:word_count", Version: "1.0.0"}, ``, capabilities.CodeInvalidInput, "", "text"},
		{"deadline", cap.Ref{CapabilityID: "cap:slow", Version: "1.0.0"}, `{}`, capabilities.CodeTimeout, "", "deadline"},
		{"plain failure hides text", cap.Ref{CapabilityID: "cap:fails", Version: "1.0.0"}, `{}`, capabilities.CodeExecutionFailed, "", "the capability failed"},
		{"coded error passes", cap.Ref{CapabilityID: "cap:denied", Version: "1.0.0"}, `{}`, capabilities.CodePermissionDenied, "", "state.delete is not granted"},
		{"output violates schema", cap.Ref{CapabilityID: "cap:liar", Version: "1.0.0"}, `{}`, capabilities.CodeExecutionFailed, "", "output_schema"},
		{"output not JSON", cap.Ref{CapabilityID: "cap:garbage", Version: "1.0.0"}, `{}`, capabilities.CodeExecutionFailed, "", "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { // "deadline" waits the timeout on the bubble's clock
				host := cap.NewHost(newSource(), cap.Options{Timeout: time.Minute})
				res := host.Invoke(ctx, agentA, tt.ref, json.RawMessage(tt.input))
				if tt.wantCode == "" {
					if !res.OK || res.Error != nil || string(res.Output) != tt.wantOutput {
						t.Fatalf("got %+v (error %v), want ok with %s", res, res.Error, tt.wantOutput)
					}
					return
				}
				if res.OK || res.Error == nil || res.Output != nil {
					t.Fatalf("got %+v, want an error %s", res, tt.wantCode)
				}
				if res.Error.Code != tt.wantCode || !strings.Contains(res.Error.Message, tt.wantInMsg) {
					t.Errorf("got %s %q, want %s containing %q", res.Error.Code, res.Error.Message, tt.wantCode, tt.wantInMsg)
				}
				if strings.Contains(res.Error.Message, "password") {
					t.Errorf("message leaks internal text: %q", res.Error.Message)
				}
			})
		})
	}
}

func TestHost_Invoke_callerDeadline(t *testing.T) {
	synctest.Test(t, testHostInvokeCallerDeadline)
}

func testHostInvokeCallerDeadline(t *testing.T) {
	host := cap.NewHost(newSource(), cap.Options{}) // default timeout: a minute
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := host.Invoke(ctx, agentA, cap.Ref{CapabilityID: "cap:slow", Version: "1.0.0"}, nil)
	if res.OK || res.Error.Code != capabilities.CodeTimeout {
		t.Fatalf("got %+v, want TIMEOUT from the caller's deadline", res)
	}
}

func TestHost_Invoke_invalidInputNeverRuns(t *testing.T) {
	src := newSource()
	host := cap.NewHost(src, cap.Options{})
	host.Invoke(context.Background(), agentA, cap.Ref{CapabilityID: "cap:word_count", Version: "1.0.0"}, json.RawMessage(`{}`))
	if n := src.runs.Load(); n != 0 {
		t.Fatalf("the source ran %d times for invalid input", n)
	}
}

func TestHost_Describe(t *testing.T) {
	host := cap.NewHost(newSource(), cap.Options{})
	ctx := context.Background()
	m, err := host.Describe(ctx, agentA, cap.Ref{CapabilityID: "cap:versioned"})
	if err != nil || m.Version != "1.10.0" {
		t.Fatalf("latest: got %+v, %v; want 1.10.0 (semver, pre-release below release)", m, err)
	}
	_, err = host.Describe(ctx, agentA, cap.Ref{CapabilityID: "cap:versioned", Version: "3.0.0"})
	if !isCode(err, capabilities.CodeNotFound) {
		t.Fatalf("unknown version: got %v, want NOT_FOUND", err)
	}
	_, err = host.Describe(ctx, "someone else", cap.Ref{CapabilityID: "cap:versioned"})
	if !isCode(err, capabilities.CodeNotFound) {
		t.Fatalf("unknown agent: got %v, want NOT_FOUND", err)
	}
}

func TestHost_List(t *testing.T) {
	host := cap.NewHost(newSource(), cap.Options{})
	ms, err := host.List(context.Background(), agentA)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(ms), len(newSource().caps); got != want {
		t.Fatalf("got %d manifests, want %d", got, want)
	}
}

func isCode(err error, code string) bool {
	ce, ok := err.(*capabilities.Error)
	return ok && ce.Code == code
}

func TestInvokeResult_JSON(t *testing.T) {
	tests := []struct {
		res  cap.InvokeResult
		want string
	}{
		{cap.InvokeResult{OK: true, Output: json.RawMessage(`{"words":3}`), DurationMS: 4},
			`{"ok":true,"output":{"words":3},"error":null,"duration_ms":4}`},
		{cap.InvokeResult{Error: capabilities.Errorf(capabilities.CodeNotFound, "no capability")},
			`{"ok":false,"output":null,"error":{"code":"NOT_FOUND","message":"no capability"},"duration_ms":0}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.res)
		if err != nil || string(got) != tt.want {
			t.Errorf("got %s (%v), want %s", got, err, tt.want)
		}
	}
}

func TestManifest_JSON(t *testing.T) {
	m := cap.Manifest{CapabilityID: "cap:x", Version: "1.0.0", Kind: cap.KindTool, Name: "x", InputSchema: json.RawMessage(`{"type":"object"}`)}
	got, _ := json.Marshal(m)
	want := `{"capability_id":"cap:x","version":"1.0.0","kind":"tool","name":"x","description":"","input_schema":{"type":"object"},` +
		`"output_schema":null,"prompt_template":null,"resources":null,"required_permissions":null}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
