package main

import (
	"strings"
	"testing"
	"time"
)

func TestServeConfig_webSection(t *testing.T) {
	var f serveFile
	if err := parseServeFile([]byte(`{"web":{"max_renders":8,"render_wait_ms":500}}`), &f); err != nil {
		t.Fatal(err)
	}
	if f.Web.MaxRenders != 8 || f.Web.RenderWait != 500*time.Millisecond {
		t.Fatalf("web = %+v", f.Web)
	}
	for _, bad := range []string{`{"web":{"max_renders":-1}}`, `{"web":{"render_wait_ms":-5}}`, `{"web":{"renders":5}}`, `{"web":3}`} {
		var g serveFile
		if err := parseServeFile([]byte(bad), &g); err == nil || !strings.Contains(err.Error(), "web") {
			t.Errorf("%s: err = %v, want a web error", bad, err)
		}
	}
}
