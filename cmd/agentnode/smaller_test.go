package main

import (
	"strings"
	"testing"
)

// The operator papercuts of the web/operator issue: each answer names the
// mistake instead of succeeding quietly or speaking of something else.
func TestCLI_namesTheMistake(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"def", "list", "--limit", "-5"}, "--limit must be at least 1 (got -5)"},
		{[]string{"lesson", "list", "--limit", "0"}, "--limit must be at least 1 (got 0)"},
		{[]string{"verify", "npub1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"}, "not a valid npub"},
		{[]string{"verify", "not-a-key"}, "want an npub, an nprofile or 64 hex characters"},
	} {
		r := cli(t, map[string]string{"AGENTNODE_RELAY": "ws://127.0.0.1:1"}, tc.args...)
		if r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
			t.Errorf("agentnode %s: %v, want an error saying %q", strings.Join(tc.args, " "), r.err, tc.want)
		}
	}
}
