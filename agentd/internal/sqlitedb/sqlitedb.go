// Package sqlitedb opens the agent daemon's small SQLite files (tasks,
// consent) the one way they all need: the directory created 0700, WAL,
// synchronous=FULL (a committed change survives a crash), a busy timeout
// and BEGIN IMMEDIATE transactions, then the file's schema applied.
//
//	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "tasks.db"), ddl)
package sqlitedb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // the pure-Go "sqlite" driver
)

// Open opens (creating it and its directory if needed) the SQLite file at
// path and executes ddl (CREATE ... IF NOT EXISTS statements).
func Open(ctx context.Context, path, ddl string) (*sql.DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if _, err := db.ExecContext(ctx, ddl); err != nil {
		db.Close()
		return nil, fmt.Errorf("create tables in %s: %w", path, err)
	}
	return db, nil
}

func dsn(path string) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "busy_timeout(5000)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}
