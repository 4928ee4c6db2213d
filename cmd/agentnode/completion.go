package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/template"
)

func init() {
	commands["completion"] = command{"print a shell completion script (bash; zsh through bashcompinit)", runCompletion}
}

const completionUsage = `completion bash

Prints a bash completion script for the subcommands. Load it with
  source <(agentnode completion bash)
or save it as /etc/bash_completion.d/agentnode. zsh: run
  autoload -U +X bashcompinit && bashcompinit
first.`

// bashCompletion completes the command, then the subcommand of a group;
// after that, file names (the shell's default).
var bashCompletion = template.Must(template.New("bash").Parse(`# agentnode bash completion (agentnode completion bash)
_agentnode() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "{{.Commands}}" -- "$cur") )
    return
  fi
  if [ "$COMP_CWORD" -eq 2 ]; then
    case "${COMP_WORDS[1]}" in
{{- range .Groups}}{{if eq .Depth 1}}
      "{{.Name}}") COMPREPLY=( $(compgen -W "{{.Subs}}" -- "$cur") ); return ;;
{{- end}}{{end}}
    esac
  fi
  if [ "$COMP_CWORD" -eq 3 ]; then
    case "${COMP_WORDS[1]} ${COMP_WORDS[2]}" in
{{- range .Groups}}{{if eq .Depth 2}}
      "{{.Name}}") COMPREPLY=( $(compgen -W "{{.Subs}}" -- "$cur") ); return ;;
{{- end}}{{end}}
    esac
  fi
  COMPREPLY=( $(compgen -f -- "$cur") )
}
complete -o filenames -F _agentnode agentnode
`))

func runCompletion(_ context.Context, m *Main, args []string) error {
	if len(args) != 1 || args[0] != "bash" {
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(m.Stdout, "Usage: agentnode "+completionUsage)
			return errHelpShown
		}
		return usagef("completion: want `agentnode completion bash`")
	}
	type groupWords struct {
		Name, Subs string
		Depth      int // words in Name: "def" 1, "agent cap" 2
	}
	data := struct {
		Commands string
		Groups   []groupWords
	}{Commands: strings.Join(sortedKeys(commands, "help", "version"), " ")}
	for _, name := range sortedKeys(groups) {
		data.Groups = append(data.Groups, groupWords{name, strings.Join(sortedKeys(groups[name], "help"), " "), len(strings.Fields(name))})
	}
	return bashCompletion.Execute(m.Stdout, data)
}

// sortedKeys returns m's keys and extra, sorted.
func sortedKeys[V any](m map[string]V, extra ...string) []string {
	keys := extra
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
