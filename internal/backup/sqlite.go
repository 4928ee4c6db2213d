package backup

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"

	_ "modernc.org/sqlite" // the pure-Go "sqlite" driver
)

// sqliteHeader starts every SQLite 3 database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// isSQLite reports whether the file at path is a SQLite database.
func isSQLite(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	n, _ := f.Read(head)
	return n == len(head) && bytes.Equal(head, sqliteHeader)
}

// vacuumInto writes a consistent, compacted copy of the live database at
// src to dst with VACUUM INTO: one read transaction, so a writer in
// another process (serve) goes on and the copy holds its last commit,
// WAL included.
func vacuumInto(ctx context.Context, src, dst string) error {
	db, err := sql.Open("sqlite", "file:"+src+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		return fmt.Errorf("backup %s: %w", src, err)
	}
	if err := os.Chmod(dst, 0o600); err != nil {
		return err
	}
	return syncFile(dst)
}
