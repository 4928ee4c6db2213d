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
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"agentnode", "serve", "--log"}, "--log-json --log-level"},
		{[]string{"agentnode", "state", "query", "--ow"}, "--owner"},
		{[]string{"agentnode", "agent", "cap", "upgrade", "--acc"}, "--accept-permissions"},
		{[]string{"agentnode", "state", "query", "x", "--sc"}, "--scope"},
	} {
		if got := complete(tc.words...); got != tc.want {
			t.Errorf("%s<TAB> = %q, want %q", strings.Join(tc.words, " "), got, tc.want)
		}
	}
}

// zsh gets the bash completion through bashcompinit; fish gets its own
// complete lines, flags included.
func TestCompletion_zshAndFish(t *testing.T) {
	zsh := cli(t, nil, "completion", "zsh")
	if zsh.err != nil || !strings.HasPrefix(zsh.stdout, "#compdef agentnode\n") || !strings.Contains(zsh.stdout, "bashcompinit") ||
		!strings.Contains(zsh.stdout, `"state query") echo "--agent --data --file --json --owner --scope"`) {
		t.Errorf("completion zsh: %v\n%s", zsh.err, zsh.stdout)
	}
	fish := cli(t, nil, "completion", "fish")
	for _, want := range []string{
		"complete -c agentnode -f -n '__fish_use_subcommand' -a 'agent ",
		"complete -c agentnode -n '__fish_seen_subcommand_from state; and __fish_seen_subcommand_from query' -l owner",
		"complete -c agentnode -n '__fish_seen_subcommand_from serve' -l postgres",
	} {
		if fish.err != nil || !strings.Contains(fish.stdout, want) {
			t.Errorf("completion fish lacks %q (%v)", want, fish.err)
		}
	}
	if r := cli(t, nil, "completion", "tcsh"); r.err == nil {
		t.Error("completion tcsh: want a usage error")
	}
}
