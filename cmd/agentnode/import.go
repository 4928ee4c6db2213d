package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay"
)

const importUsage = "import [FILE | -] [--data DIR | --postgres URL | --url WS_URL] [--config FILE] [--parallel N]"

// importFlags are import's input and target.
type importFlags struct {
	data, postgres, url, config string
	parallel                    int
}

// runImport reads JSONL events (a file, or stdin) and publishes each
// through the relay's publish path: offline into a data directory or a
// PostgreSQL database, or into a running node over its URL. Refusals are
// reported with their line and reason; a summary ends the run, which fails
// when any line was not stored.
func runImport(ctx context.Context, m *Main, args []string) error {
	var f importFlags
	fs := m.newFlagSet("import", importUsage)
	fs.StringVar(&f.data, "data", m.envOr("AGENTNODE_DATA", DefaultDataDir), "data directory to import into (serve must not be running on it; use --url then) (env AGENTNODE_DATA)")
	fs.StringVar(&f.postgres, "postgres", "", "import into this PostgreSQL database instead (serve may be running on it)")
	fs.StringVar(&f.url, "url", "", "import into a running node or relay at this ws(s):// URL instead")
	fs.StringVar(&f.config, "config", m.envOr("AGENTNODE_CONFIG", ""), "with --data or --postgres: the node's serve --config file, whose \"relay\" limits the import enforces (default: the default limits) (env AGENTNODE_CONFIG)")
	fs.IntVar(&f.parallel, "parallel", 64, "events in flight at once (the relay commits them in groups)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 || f.parallel < 1 {
		return usagef("usage: agentnode %s", importUsage)
	}
	in, closeIn, err := m.importInput(pos)
	if err != nil {
		return err
	}
	defer closeIn()
	pub, closePub, err := m.importTarget(ctx, f)
	if err != nil {
		return err
	}
	defer closePub()
	return m.importStream(ctx, in, pub, f.parallel)
}

// importInput is the named file, or stdin for none or "-".
func (m *Main) importInput(pos []string) (io.Reader, func(), error) {
	if len(pos) == 0 || pos[0] == "-" {
		return m.Stdin, func() {}, nil
	}
	file, err := os.Open(pos[0])
	if err != nil {
		return nil, nil, fmt.Errorf("import: %w", err)
	}
	return file, func() { file.Close() }, nil
}

// publisher stores one event or says why not (a NIP-01 prefixed refusal).
type publisher func(ctx context.Context, evt *nostr.Event) error

// importTarget opens where the events go: a running node (--url), a
// PostgreSQL database (--postgres) or a data directory, the last two
// through an in-process relay with the default limits.
func (m *Main) importTarget(ctx context.Context, f importFlags) (publisher, func(), error) {
	if f.url != "" {
		return dialPublisher(ctx, f.url)
	}
	limits, err := m.configLimits(f.config)
	if err != nil {
		return nil, nil, err
	}
	cfg := relay.Config{DataDir: f.data, Version: Version, Logger: quietLogger(m), Limits: limits}
	if f.postgres != "" {
		cfg.DataDir, cfg.Postgres = "", f.postgres
	}
	r, err := relay.Open(ctx, cfg)
	if errors.Is(err, relay.ErrDataDirInUse) {
		return nil, nil, fmt.Errorf("import: %w (stop it, or import into the running node with --url ws://HOST:PORT)", err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("import: %w", err)
	}
	return r.Publish, func() { r.Close(context.WithoutCancel(ctx)) }, nil
}

// importSummary counts what happened to each line.
type importSummary struct {
	lines, stored, unreadable int
	refused                   map[string]int // by NIP-01 prefix
}

// report prints the summary line and returns the run's error, if any
// line was not stored.
func (s *importSummary) report(w io.Writer) error {
	refused, parts := 0, []string{}
	for _, p := range sortedKeys(s.refused) {
		refused += s.refused[p]
		parts = append(parts, fmt.Sprintf("%s %d", p, s.refused[p]))
	}
	detail := ""
	if len(parts) > 0 {
		detail = " (" + strings.Join(parts, ", ") + ")"
	}
	fmt.Fprintf(w, "imported %d of %d lines: %d refused%s, %d unreadable\n", s.stored, s.lines, refused, detail, s.unreadable)
	if bad := refused + s.unreadable; bad > 0 {
		return fmt.Errorf("import: %d of %d lines not stored (reasons above)", bad, s.lines)
	}
	return nil
}

// configLimits are the relay limits of a serve --config file ("": the
// defaults), read by serve's own parser.
func (m *Main) configLimits(path string) (relay.Limits, error) {
	if path == "" {
		return relay.Limits{}, nil
	}
	c := &ServeCommand{m: m}
	if err := c.ParseFlags([]string{"--config", path}); err != nil {
		return relay.Limits{}, fmt.Errorf("import: %w", err)
	}
	return c.relayLimits(), nil
}
