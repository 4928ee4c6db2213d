package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// serveReload is serve's SIGHUP handling: from Open on, SIGHUP no longer
// kills the node; runReload rereads --config at each one and applies what
// may change at run time (docs/SERVE.md#reload).
type serveReload struct {
	hup     chan os.Signal
	applied *serveFile // the config file the node runs with (runReload's own)
}

// openReload catches SIGHUP (one waiting signal is kept: several sent
// while a reload runs make one more reload). Until runReload starts, a
// SIGHUP waits.
func (c *ServeCommand) openReload(context.Context, *slog.Logger) error {
	c.reload = &serveReload{hup: make(chan os.Signal, 1), applied: c.file}
	signal.Notify(c.reload.hup, syscall.SIGHUP)
	c.onClose(func(context.Context) error { signal.Stop(c.reload.hup); return nil })
	return nil
}

// runReload reloads at each SIGHUP until ctx ends.
func (c *ServeCommand) runReload(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.reload.hup:
			c.reloadConfig()
		}
	}
}

// reloadConfig rereads --config and applies the log level, the relay's
// run-time limits, its operators and lists, and the trust policy; it logs
// each change, and the changes that need a restart (not applied). A file
// that does not parse changes nothing.
func (c *ServeCommand) reloadConfig() {
	next, err := c.rereadConfig()
	if err != nil {
		slog.Error("reload refused: the config file is invalid; nothing changed", "config", c.Config.ConfigFile, "err", err)
		return
	}
	prev := c.reload.applied
	var applied, restart []string
	for _, step := range []func(prev, next *serveFile) (applied, restart []string){
		c.reloadLogLevel, c.reloadRelay, c.reloadOperators, c.reloadTrust,
	} {
		a, r := step(prev, next)
		applied, restart = append(applied, a...), append(restart, r...)
	}
	restart = append(restart, c.file.restartChanges(next)...) // against the start: still not in force
	c.reload.applied = next
	if len(restart) > 0 {
		slog.Warn("reload: these changes need a restart and were not applied", "changes", strings.Join(restart, "; "))
	}
	slog.Info("reloaded (SIGHUP)", "config", c.Config.ConfigFile, "changed", listOrNone(applied)) // last: the reload is over
}

// rereadConfig parses --config again (none: an empty file), carrying what
// the command line set over it.
func (c *ServeCommand) rereadConfig() (*serveFile, error) {
	f := &serveFile{}
	if c.file != nil {
		f.followsFlag = c.file.followsFlag
	}
	if c.Config.ConfigFile == "" {
		return f, nil
	}
	b, err := os.ReadFile(c.Config.ConfigFile)
	if err != nil {
		return nil, err
	}
	if err := parseServeFile(b, f); err != nil {
		return nil, err
	}
	return f, nil
}

func listOrNone(changes []string) string {
	if len(changes) == 0 {
		return "nothing"
	}
	return strings.Join(changes, "; ")
}

// reloadLogLevel applies "node.log_level" (absent: --log-level again).
func (c *ServeCommand) reloadLogLevel(_, next *serveFile) ([]string, []string) {
	want := c.Config.LogLevel
	if next.Node.LogLevel != "" {
		want = next.Node.LogLevel
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(want)); err != nil || level == c.level.Level() {
		return nil, nil
	}
	was := c.level.Level()
	c.level.Set(level)
	return []string{fmt.Sprintf("log level %s -> %s", was, level)}, nil
}

// reloadRelay applies the relay's run-time limits.
func (c *ServeCommand) reloadRelay(_, next *serveFile) ([]string, []string) {
	applied, restart := c.relay.ReloadLimits(relayLimitsFrom(next))
	return prefixed("relay.", applied), prefixed("relay.", restart)
}

// reloadOperators applies relay.operators and relay.agent_kinds_only, and
// rereads the lists' file.
func (c *ServeCommand) reloadOperators(prev, next *serveFile) ([]string, []string) {
	ops, _ := operatorKeys(next.Relay.Operators) // checked by parseServeFile
	if err := c.relay.SetManagement(ops, next.Relay.AgentKindsOnly); err != nil {
		slog.Error("reload: the relay's lists", "err", err)
	}
	return managementChanges(prev, next), nil
}

// reloadTrust applies the "trust" section (with the --trust-* flags).
func (c *ServeCommand) reloadTrust(_, next *serveFile) ([]string, []string) {
	before, after, err := c.daemon.SetTrust(c.trustFrom(next))
	if err != nil {
		slog.Error("reload: trust refused; the old policy stays", "err", err)
		return nil, nil
	}
	if before == after {
		return nil, nil
	}
	return []string{fmt.Sprintf("trust %s -> %s", before, after)}, nil
}

func prefixed(p string, list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = p + s
	}
	return out
}
