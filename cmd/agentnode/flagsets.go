package main

import (
	"context"
	"flag"
	"io"
	"slices"
	"strings"
)

// commandFlags is one command line's flags, as its flag set defines them.
type commandFlags struct {
	Path  string   // "serve", "state query", "agent cap install"
	Flags []string // flag names without dashes, sorted
}

// allCommandFlags asks every command and subcommand for its help (-h,
// which parses flags and returns before any I/O) on a silent Main that
// records the flag sets they define. It is the binary's own table of
// flags: shell completion (completion.go) and the docs test read it.
func allCommandFlags(ctx context.Context) []commandFlags {
	var out []commandFlags
	for _, path := range commandPaths() {
		var sets []*flag.FlagSet
		m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
			Getenv: func(string) string { return "" }, record: func(fs *flag.FlagSet) { sets = append(sets, fs) }}
		_ = m.Run(ctx, append(strings.Fields(path), "-h"))
		cf := commandFlags{Path: path}
		for _, fs := range sets {
			fs.VisitAll(func(f *flag.Flag) { cf.Flags = append(cf.Flags, f.Name) })
		}
		slices.Sort(cf.Flags)
		out = append(out, cf)
	}
	return out
}

// commandPaths lists every runnable command line: each command, and each
// group's subcommands (groups nest: "agent cap install").
func commandPaths() []string {
	table := commandTable()
	all := groups(table)
	var out []string
	var walk func(prefix string, names []string)
	walk = func(prefix string, names []string) {
		for _, name := range names {
			path := strings.TrimSpace(prefix + " " + name)
			if subs, ok := all[path]; ok {
				walk(path, sortedKeys(subs))
				continue
			}
			if path == "bench" { // bench dispatches its own subcommands (bench.go)
				walk(path, sortedKeys(benchRunners))
				continue
			}
			out = append(out, path)
		}
	}
	walk("", sortedKeys(table))
	return out
}
