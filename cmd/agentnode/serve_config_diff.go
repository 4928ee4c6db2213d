package main

import (
	"encoding/json"
	"fmt"
	"slices"
)

// What a SIGHUP reload (serve_reload.go) finds changed in the config file.

// restartChanges are the sections of next that differ from prev's (the
// config the node started with; nil: none) and are read only at the
// start: a SIGHUP cannot apply them (serve_reload.go). The run-time keys
// of "relay" and "node" are diffed where they are applied.
func (prev *serveFile) restartChanges(next *serveFile) []string {
	if prev == nil {
		prev = &serveFile{}
	}
	var restart []string
	for name, get := range map[string]func(*serveFile) any{
		"model": func(f *serveFile) any { return f.Model }, "models/router": func(f *serveFile) any { return f.Routing },
		"bindings": func(f *serveFile) any { return f.Bindings }, "consent": func(f *serveFile) any { return f.Consent },
		"dm": func(f *serveFile) any { return f.DM }, "a2a": func(f *serveFile) any { return f.A2A },
		"strangers": func(f *serveFile) any { return f.Strangers }, "directory": func(f *serveFile) any { return f.Directory },
		"http": func(f *serveFile) any { return f.HTTP }, "web": func(f *serveFile) any { return f.Web },
		"postgres": func(f *serveFile) any { return f.Postgres }, "state": func(f *serveFile) any { return f.State },
		"node": func(f *serveFile) any { n := f.Node; n.LogLevel = ""; return n },
	} {
		if !sameJSON(get(prev), get(next)) {
			restart = append(restart, name)
		}
	}
	slices.Sort(restart)
	return restart
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// managementChanges are the changes of relay.operators and
// relay.agent_kinds_only from prev (nil: none) to next.
func managementChanges(prev, next *serveFile) []string {
	var was serveRelay
	if prev != nil {
		was = prev.Relay
	}
	wasOps, _ := operatorKeys(was.Operators) // checked by parseServeFile
	ops, _ := operatorKeys(next.Relay.Operators)
	var out []string
	if !slices.Equal(wasOps, ops) {
		out = append(out, fmt.Sprintf("relay.operators %d -> %d", len(wasOps), len(ops)))
	}
	if was.AgentKindsOnly != next.Relay.AgentKindsOnly {
		out = append(out, fmt.Sprintf("relay.agent_kinds_only %v -> %v", was.AgentKindsOnly, next.Relay.AgentKindsOnly))
	}
	return out
}
