package main

import (
	"strings"
	"testing"
	"time"
)

func TestServeConfig_modelsAndRouterSections(t *testing.T) {
	var f serveFile
	body := `{"models":[{"name":"small","family":"llama3","context_window":8192,"features":["tool_use"]},
		{"name":"big","uri":"did:nuwa:model:big","context_window":128000}],
		"router":{"idle_timeout_seconds":600}}`
	if err := parseServeFile([]byte(body), &f); err != nil {
		t.Fatal(err)
	}
	m := f.Models.models()
	if len(m) != 2 || m[0].Name != "small" || m[0].ContextWindow != 8192 || m[0].Features[0] != "tool_use" || m[1].URI != "did:nuwa:model:big" {
		t.Fatalf("models = %+v", m)
	}
	if f.Router.idle() != 10*time.Minute {
		t.Errorf("idle = %v", f.Router.idle())
	}
	var never serveFile
	if err := parseServeFile([]byte(`{"router":{"idle_timeout_seconds":-1}}`), &never); err != nil || never.Router.idle() >= 0 {
		t.Errorf("-1: %v %v", err, never.Router.idle())
	}
	for _, tc := range []struct{ body, want string }{
		{`{"models":[{"family":"x"}]}`, `"models"[0]: "name" is required`},
		{`{"models":[{"name":"a"},{"name":"a"}]}`, `listed twice`},
		{`{"models":[{"name":"a","context_window":-5}]}`, `must not be negative`},
		{`{"models":[{"name":"a","ctx":5}]}`, `"models"`},
		{`{"router":{"idle":5}}`, `"router"`},
		{`{"router":{"idle_timeout_seconds":-2}}`, `idle_timeout_seconds`},
	} {
		var g serveFile
		if err := parseServeFile([]byte(tc.body), &g); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ...%s...", tc.body, err, tc.want)
		}
	}
}
