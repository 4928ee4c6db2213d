package testkit

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// RunJSON runs the program bin (an agentnode binary) with args and
// decodes its standard output, JSON, into v; it fails the test, with the
// program's standard error, if the program fails or prints no JSON.
func RunJSON(t testing.TB, bin string, v any, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("agentnode %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("agentnode %s: output is not JSON (%v):\n%s", strings.Join(args, " "), err, out)
	}
}
