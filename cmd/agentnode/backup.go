package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/internal/backup"
	"github.com/agentnode/agentnode/relay"
)

const (
	backupUsage  = "backup <dir> [--data DIR]"
	restoreUsage = "restore <backup dir> --data DIR"
	compactUsage = "compact [--data DIR]"
)

// runBackup copies the data directory into a new backup directory while
// serve may be running on it (docs/OPERATIONS.md).
func runBackup(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("backup", backupUsage)
	data := fs.String("data", m.envOr("AGENTNODE_DATA", DefaultDataDir), "data directory to back up (env AGENTNODE_DATA)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: agentnode %s", backupUsage)
	}
	man, err := backup.Create(ctx, *data, pos[0], Version)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(m.Stdout, "backed up %s to %s: %d files, %s\n", *data, pos[0], len(man.Files), humanBytes(man.Bytes()))
	return nil
}

// runRestore checks a backup and copies it into a new data directory.
func runRestore(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("restore", restoreUsage)
	data := fs.String("data", "", "the new data directory (must not exist or be empty)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *data == "" {
		return usagef("usage: agentnode %s", restoreUsage)
	}
	man, err := backup.Restore(ctx, pos[0], *data)
	if errors.Is(err, backup.ErrTargetExists) {
		return fmt.Errorf("restore: %w (restore into a new directory, or move the old one aside)", err)
	}
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(m.Stdout, "restored %s (made %s by agentnode %s) into %s: %d files, %s\n",
		pos[0], man.CreatedAt.Format("2006-01-02 15:04:05Z"), man.Version, *data, len(man.Files), humanBytes(man.Bytes()))
	return nil
}

// runCompact rewrites the LMDB store without its free pages.
func runCompact(_ context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("compact", compactUsage)
	data := fs.String("data", m.envOr("AGENTNODE_DATA", DefaultDataDir), "data directory (env AGENTNODE_DATA)")
	if err := parseNoArgs(fs, "compact", args); err != nil {
		return err
	}
	before, after, err := relay.CompactEventStore(*data)
	if errors.Is(err, relay.ErrDataDirInUse) {
		return fmt.Errorf("compact: %w (stop serve first; `agentnode backup` works while it runs and writes a compacted copy)", err)
	}
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	fmt.Fprintf(m.Stdout, "compacted %s: %s on disk before, %s after\n", *data, humanBytes(before), humanBytes(after))
	return nil
}

// humanBytes is n in B, KiB, MiB or GiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n), "KMGT"
	i := -1
	for v >= unit && i < len(suffix)-1 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, suffix[i])
}
