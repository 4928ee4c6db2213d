package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The bash completion script is valid bash and completes commands and a
// group's subcommands, as bash itself computes them.
func TestCompletion_bash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("SKIP: no bash on this machine")
	}
	r := cli(t, nil, "completion", "bash")
	if r.err != nil {
		t.Fatal(r.err)
	}
	script := filepath.Join(t.TempDir(), "agentnode.bash")
	if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) string {
		prog := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _agentnode; echo "${COMPREPLY[*]}"`
		out, err := exec.Command(bash, append([]string{"-c", prog, "bash", script}, words...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := complete("agentnode", "se"); got != "serve" {
		t.Errorf("agentnode se<TAB> = %q, want serve", got)
	}
	if got := complete("agentnode", "def", "f"); got != "fetch" {
		t.Errorf("agentnode def f<TAB> = %q, want fetch", got)
	}
	if got := complete("agentnode", "cap", ""); !strings.Contains(got, "publish") || !strings.Contains(got, "verify") {
		t.Errorf("agentnode cap <TAB> = %q, want the cap subcommands", got)
	}
	if got := complete("agentnode", "agent", "cap", "up"); got != "upgrade" {
		t.Errorf("agentnode agent cap up<TAB> = %q, want upgrade", got)
	}
}
