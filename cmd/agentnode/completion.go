package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/template"
)

const completionUsage = `completion bash|zsh|fish

Prints a completion script for the subcommands and each one's flags.
  bash: source <(agentnode completion bash)   (or save it as /etc/bash_completion.d/agentnode)
  zsh:  agentnode completion zsh > "${fpath[1]}/_agentnode"   (then restart zsh)
  fish: agentnode completion fish > ~/.config/fish/completions/agentnode.fish`

// bashCompletion completes the command, then the subcommand of a group,
// a command's flags after "-"; otherwise file names (the shell's default).
var bashCompletion = template.Must(template.New("bash").Parse(`# agentnode bash completion (agentnode completion bash)
_agentnode_flags() {
  case "$1" in
{{- range .Flags}}
    "{{.Path}}") echo "{{.Words}}" ;;
{{- end}}
  esac
}
_agentnode() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  if [ "$COMP_CWORD" -ge 2 ] && [ "${cur#-}" != "$cur" ]; then
    local f
    f=$(_agentnode_flags "${COMP_WORDS[1]} ${COMP_WORDS[2]} ${COMP_WORDS[3]}")
    [ -z "$f" ] && f=$(_agentnode_flags "${COMP_WORDS[1]} ${COMP_WORDS[2]}")
    [ -z "$f" ] && f=$(_agentnode_flags "${COMP_WORDS[1]}")
    COMPREPLY=( $(compgen -W "$f" -- "$cur") )
    return
  fi
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

// fishCompletion: commands, each group's subcommands once the group is
// typed, and each command's long flags once its words are typed.
var fishCompletion = template.Must(template.New("fish").Parse(`# agentnode fish completion (agentnode completion fish)
complete -c agentnode -f -n '__fish_use_subcommand' -a '{{.Commands}}'
{{- range .Groups}}
complete -c agentnode -f -n '{{.Seen}}' -a '{{.Subs}}'
{{- end}}
{{- range .Flags}}{{$seen := .Seen}}{{range .Names}}
complete -c agentnode -n '{{$seen}}' -l {{.}}
{{- end}}{{end}}
`))

// completionWords is what the templates read.
type completionWords struct {
	Commands string
	Groups   []groupWords
	Flags    []flagWords
}

type groupWords struct {
	Name, Subs string
	Depth      int    // words in Name: "def" 1, "agent cap" 2
	Seen       string // fish: the condition "every word of Name is typed"
}

type flagWords struct {
	Path  string   // "state query"
	Words string   // "--agent --data ..."
	Names []string // "agent", "data", ...
	Seen  string   // fish condition
}

func runCompletion(ctx context.Context, m *Main, args []string) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(m.Stdout, "Usage: agentnode "+completionUsage)
		return errHelpShown
	}
	if len(args) != 1 || !slices.Contains([]string{"bash", "zsh", "fish"}, args[0]) {
		return usagef("completion: want `agentnode completion bash`, `zsh` or `fish`")
	}
	w := completionTable(ctx)
	switch args[0] {
	case "zsh": // zsh runs the bash script through its bashcompinit
		fmt.Fprint(m.Stdout, "#compdef agentnode\n# agentnode zsh completion (agentnode completion zsh)\nautoload -U +X bashcompinit && bashcompinit\n")
		return bashCompletion.Execute(m.Stdout, w)
	case "fish":
		return fishCompletion.Execute(m.Stdout, w)
	}
	return bashCompletion.Execute(m.Stdout, w)
}

// completionTable reads the command table and every command's flags.
func completionTable(ctx context.Context) completionWords {
	table := commandTable()
	all := groups(table)
	w := completionWords{Commands: strings.Join(sortedKeys(table, "help", "version"), " ")}
	for _, name := range sortedKeys(all) {
		w.Groups = append(w.Groups, groupWords{name, strings.Join(sortedKeys(all[name], "help"), " "),
			len(strings.Fields(name)), fishSeen(name)})
	}
	w.Groups = append(w.Groups, groupWords{"bench", strings.Join(sortedKeys(benchRunners), " "), 1, fishSeen("bench")})
	for _, c := range allCommandFlags(ctx) {
		if len(c.Flags) == 0 {
			continue
		}
		dashed := make([]string, len(c.Flags))
		for i, f := range c.Flags {
			dashed[i] = "--" + f
		}
		w.Flags = append(w.Flags, flagWords{Path: c.Path, Words: strings.Join(dashed, " "), Names: c.Flags, Seen: fishSeen(c.Path)})
	}
	return w
}

// fishSeen is fish's condition "each word of path has been typed".
func fishSeen(path string) string {
	var conds []string
	for _, word := range strings.Fields(path) {
		conds = append(conds, "__fish_seen_subcommand_from "+word)
	}
	return strings.Join(conds, "; and ")
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
