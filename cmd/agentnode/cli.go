package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Version is the agentnode version, set at build time with
// -ldflags "-X main.Version=...".
var Version = "dev"

// errHelpShown ends a run that printed usage on request.
var errHelpShown = errors.New("help shown")

// usageError is a mistake in how the command was called (exit code 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

func exitCode(err error) int {
	var u *usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// Main is the program: its streams and environment are fields so that tests
// run it in-process.
type Main struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// record, when set, is told of every flag set a command defines
	// (flagsets.go reads the command table's flags through it).
	record func(*flag.FlagSet)
}

// NewMain returns a Main bound to the process's streams and environment.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
}

// Run dispatches args[0] to its subcommand.
func (m *Main) Run(ctx context.Context, args []string) error {
	if len(args) > 1 && args[0] == "help" { // help <command> [<sub>]: that command's usage
		return m.Run(ctx, append(args[1:], "-h"))
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		m.usage()
		return errHelpShown
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(m.Stdout, "agentnode", Version)
		return nil
	}
	cmd, ok := commandTable()[args[0]]
	if !ok {
		return usagef("unknown command %q (run `agentnode help`)", args[0])
	}
	return m.dispatch(ctx, args[0], cmd, args[1:])
}

// dispatch runs cmd (path is its command line, "agent cap"): a group
// passes args on to the subcommand args[0] names, or prints its usage.
func (m *Main) dispatch(ctx context.Context, path string, cmd command, args []string) error {
	if cmd.subs == nil {
		return cmd.run(ctx, m, args)
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		m.groupUsage(path, cmd.subs)
		return errHelpShown
	}
	sub, ok := cmd.subs[args[0]]
	if !ok {
		return usagef("%s: unknown subcommand %q (run `agentnode %s help`)", path, args[0], path)
	}
	return m.dispatch(ctx, path+" "+args[0], sub, args[1:])
}

func (m *Main) usage() {
	fmt.Fprintf(m.Stdout, "agentnode %s: a node of the Nostr agent network\n\nUsage: agentnode <command> [flags]\n\nCommands:\n", Version)
	table := commandTable()
	for _, name := range sortedKeys(table) {
		fmt.Fprintf(m.Stdout, "  %-10s %s\n", name, table[name].summary)
	}
	fmt.Fprintf(m.Stdout, "  %-10s %s\n", "version", "print the version (also --version)")
	fmt.Fprintln(m.Stdout, "\nRun `agentnode help <command>` (or `agentnode <command> -h`) for a command's flags.")
}

// newFlagSet returns a flag set that reports errors instead of exiting.
func (m *Main) newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	if m.record != nil {
		m.record(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(m.Stderr, "Usage: agentnode %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, turning -h into errHelpShown and flag mistakes
// into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelpShown
		}
		return &usageError{err.Error()}
	}
	return nil
}

// envOr returns the environment variable name's value, or def when unset.
func (m *Main) envOr(name, def string) string {
	if v := strings.TrimSpace(m.Getenv(name)); v != "" {
		return v
	}
	return def
}
