package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/relay"
	"github.com/agentnode/agentnode/relay/negsync"
)

const syncUsage = `sync <relay url> [--filter JSON] [--dir down|up|both] [--data DIR] [--req-fallback] [--json]

Reconciles the events of the node's data directory that match --filter
with those of the relay by NIP-77 negentropy (only differing ids cross the
wire), then moves the difference: down fetches what only the relay has,
up publishes what only this node has, both does both. The node must not
be running on DIR (a running node syncs with its --peer relays itself).
A relay that does not speak NIP-77 is an error, unless --req-fallback asks
for a plain REQ download of the filter instead (down only).`

// syncFlags are sync's options.
type syncFlags struct {
	data, filter, dir string
	fallback, asJSON  bool
	timeout           time.Duration
}

// runSync: sync (see syncUsage).
func runSync(ctx context.Context, m *Main, args []string) error {
	var f syncFlags
	fs := m.newFlagSet("sync", syncUsage)
	fs.StringVar(&f.data, "data", m.envOr("AGENTNODE_DATA", DefaultDataDir), "data directory (env AGENTNODE_DATA)")
	fs.StringVar(&f.filter, "filter", "{}", "NIP-01 filter (JSON) of the events to reconcile")
	fs.StringVar(&f.dir, "dir", "down", "down, up or both")
	fs.BoolVar(&f.fallback, "req-fallback", false, "if the relay does not speak NIP-77, download the filter by REQ")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "bound on connecting and on each NIP-77 answer")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("sync: give one relay url")
	}
	opt, err := f.options()
	if err != nil {
		return usagef("sync: %v", err)
	}
	return m.sync(ctx, pos[0], f, opt)
}

// options reads --filter and --dir.
func (f syncFlags) options() (negsync.Options, error) {
	var opt negsync.Options
	if err := json.Unmarshal([]byte(f.filter), &opt.Filter); err != nil {
		return opt, fmt.Errorf("--filter: %v", err)
	}
	dir, err := negsync.ParseDirection(f.dir)
	opt.Dir, opt.Answer = dir, f.timeout
	return opt, err
}

// sync opens the data directory's relay, dials url and reconciles.
func (m *Main) sync(ctx context.Context, url string, f syncFlags, opt negsync.Options) error {
	local, err := relay.Open(ctx, relay.Config{DataDir: f.data, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if errors.Is(err, relay.ErrDataDirInUse) {
		return fmt.Errorf("sync: %w: stop the node first (a running node syncs with its --peer relays itself)", err)
	} else if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	defer local.Close(context.WithoutCancel(ctx))
	dctx, cancel := context.WithTimeout(ctx, f.timeout)
	conn, err := relayclient.Dial(dctx, url, relayclient.Options{Verify: true})
	cancel()
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	defer conn.Close()
	res, err := negsync.Sync(ctx, conn, local, opt)
	if errors.Is(err, negsync.ErrUnsupported) && f.fallback && opt.Dir == negsync.Down {
		fmt.Fprintf(m.Stderr, "sync: %v; downloading by REQ (--req-fallback)\n", err)
		res, err = negsync.Download(ctx, conn, local, opt.Filter, 0)
	}
	if err != nil {
		if errors.Is(err, negsync.ErrUnsupported) {
			return fmt.Errorf("sync: %s: %w (add --req-fallback --dir down to download by REQ instead)", url, err)
		}
		return fmt.Errorf("sync: %w", err)
	}
	return m.printSync(url, res, f.asJSON)
}

// printSync reports a sync.
func (m *Main) printSync(url string, res negsync.Result, asJSON bool) error {
	if asJSON {
		return writeJSON(m.Stdout, res)
	}
	fmt.Fprintf(m.Stdout, "%s: %d local events, %d only here, %d only there, %d rounds\n", url, res.Local, res.OnlyHere, res.OnlyThere, res.Rounds)
	fmt.Fprintf(m.Stdout, "downloaded %d, uploaded %d, refused %d; %d bytes in, %d bytes out\n",
		res.Downloaded, res.Uploaded, res.Refused, res.BytesIn, res.BytesOut)
	if res.LastRefusal != "" {
		fmt.Fprintf(m.Stdout, "last refusal: %s\n", res.LastRefusal)
	}
	return nil
}
