package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay"
)

const exportUsage = "export [--data DIR | --postgres URL | --url WS_URL] [--filter JSON] [--since T] [--until T] [--kinds K,K] [--out FILE]"

// exportFlags are export's source and filter.
type exportFlags struct {
	data, url, postgres, out    string
	filter, since, until, kinds string
}

// runExport streams the matching events of a data directory (read-only:
// `serve` may be running on it) or of a running node's URL to stdout or
// --out, one JSON event a line, and says how many it wrote on stderr.
func runExport(ctx context.Context, m *Main, args []string) error {
	var f exportFlags
	fs := m.newFlagSet("export", exportUsage)
	fs.StringVar(&f.data, "data", m.envOr("AGENTNODE_DATA", DefaultDataDir), "data directory to read (read-only; works while serve runs) (env AGENTNODE_DATA)")
	fs.StringVar(&f.url, "url", "", "read from a running node or relay at this ws(s):// URL instead (paged REQs)")
	fs.StringVar(&f.postgres, "postgres", "", "read from this PostgreSQL database instead (serve may be running on it)")
	fs.StringVar(&f.filter, "filter", "", `NIP-01 filter as JSON, e.g. '{"kinds":[31990],"authors":["<hex>"]}'`)
	fs.StringVar(&f.since, "since", "", "only events created at or after T (unix seconds or RFC 3339)")
	fs.StringVar(&f.until, "until", "", "only events created at or before T (unix seconds or RFC 3339)")
	fs.StringVar(&f.kinds, "kinds", "", "only these kinds (comma-separated)")
	fs.StringVar(&f.out, "out", "", "write to FILE instead of stdout")
	if err := parseNoArgs(fs, "export", args); err != nil {
		return err
	}
	filter, err := f.nostrFilter()
	if err != nil {
		return err
	}
	return m.export(ctx, f, filter)
}

// export opens the output and copies the source's events into it.
func (m *Main) export(ctx context.Context, f exportFlags, filter nostr.Filter) error {
	out := m.Stdout
	if f.out != "" {
		file, err := os.OpenFile(f.out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		defer file.Close()
		out = file
	}
	w := &jsonlWriter{w: bufio.NewWriterSize(out, 64<<10)}
	var err error
	switch {
	case f.url != "":
		err = exportURL(ctx, f.url, filter, w.write)
	case f.postgres != "":
		err = m.exportPostgres(ctx, f.postgres, filter, w.write)
	default:
		err = relay.ExportEvents(ctx, f.data, filter, w.write)
	}
	if ferr := w.w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("export: %w (after %d events)", err, w.n)
	}
	fmt.Fprintf(m.Stderr, "exported %d events\n", w.n)
	return nil
}

// jsonlWriter writes one event a line.
type jsonlWriter struct {
	w *bufio.Writer
	n int
}

func (j *jsonlWriter) write(evt *nostr.Event) error {
	b, err := json.Marshal(evt)
	if err != nil {
		return err
	}
	j.w.Write(b)
	if err := j.w.WriteByte('\n'); err != nil {
		return err
	}
	j.n++
	return nil
}

// nostrFilter is --filter with --since, --until and --kinds laid over it.
func (f exportFlags) nostrFilter() (nostr.Filter, error) {
	var filter nostr.Filter
	if f.filter != "" {
		if err := json.Unmarshal([]byte(f.filter), &filter); err != nil {
			return filter, usagef("export: --filter: not a NIP-01 filter: %v", err)
		}
	}
	for _, s := range []struct {
		flag, v string
		dst     **nostr.Timestamp
	}{{"since", f.since, &filter.Since}, {"until", f.until, &filter.Until}} {
		if s.v == "" {
			continue
		}
		ts, err := parseTime(s.v)
		if err != nil {
			return filter, usagef("export: --%s %q: want unix seconds or RFC 3339", s.flag, s.v)
		}
		*s.dst = &ts
	}
	kinds, err := parseKinds(f.kinds)
	if err != nil {
		return filter, usagef("export: --kinds: %v", err)
	}
	if kinds != nil {
		filter.Kinds = kinds
	}
	return filter, nil
}

// parseTime reads unix seconds or an RFC 3339 time.
func parseTime(s string) (nostr.Timestamp, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return nostr.Timestamp(n), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, err
	}
	return nostr.Timestamp(t.Unix()), nil
}

// parseKinds reads "1,30023" (nil for "").
func parseKinds(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var kinds []int
	for _, part := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || k < 0 || k > 65535 {
			return nil, fmt.Errorf("%q is not a kind (0-65535)", part)
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}

// exportPostgres pages through a PostgreSQL store with an in-process relay
// (no listener of its own is needed, but Open starts one: cheap).
func (m *Main) exportPostgres(ctx context.Context, url string, filter nostr.Filter, visit func(*nostr.Event) error) error {
	r, err := relay.Open(ctx, relay.Config{Postgres: url, Version: Version, Logger: quietLogger(m)})
	if err != nil {
		return err
	}
	defer r.Close(context.WithoutCancel(ctx))
	return exportPaged(ctx, r.QuerySync, filter, relay.DefaultLimits.MaxLimit, visit)
}

// quietLogger logs warnings and errors to stderr.
func quietLogger(m *Main) *slog.Logger {
	return slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
