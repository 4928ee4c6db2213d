package backup

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCreate_copiesALiveSQLiteDatabaseWithItsWAL: rows committed to the
// WAL of a database another connection holds open are in the copy; the
// -wal and -shm files and the pid lock are not copied.
func TestCreate_copiesALiveSQLiteDatabaseWithItsWAL(t *testing.T) {
	data := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "state.db")+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{"CREATE TABLE t (v TEXT)", "INSERT INTO t VALUES ('kept')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := os.Stat(filepath.Join(data, "state.db-wal")); err != nil || st.Size() == 0 {
		t.Fatalf("the row is not in the WAL (the test would not test it): %v", err)
	}
	os.WriteFile(filepath.Join(data, "agentnode.pid"), []byte("1\n"), 0o600)
	dst := filepath.Join(t.TempDir(), "b")
	m, err := Create(context.Background(), data, dst, "test")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	if len(paths) != 1 || paths[0] != "state.db" {
		t.Fatalf("backup files %q, want only state.db", paths)
	}
	copyDB, err := sql.Open("sqlite", "file:"+filepath.Join(dst, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer copyDB.Close()
	var v string
	if err := copyDB.QueryRow("SELECT v FROM t").Scan(&v); err != nil || v != "kept" {
		t.Fatalf("the copy's row: %q, %v", v, err)
	}
}

// TestRestore_refusesAManifestPathOutsideTheBackup: a manifest naming
// "../x" is corrupt, and nothing is written.
func TestRestore_refusesAManifestPathOutsideTheBackup(t *testing.T) {
	src := t.TempDir()
	b, _ := json.Marshal(Manifest{Format: 1, Files: []File{{Path: "../escape", Bytes: 1, SHA256: "00"}}})
	os.WriteFile(filepath.Join(src, ManifestFile), b, 0o600)
	target := filepath.Join(t.TempDir(), "data")
	if _, err := Restore(context.Background(), src, target); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("restore of a manifest with ../escape: %v, want ErrCorrupt", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused restore created %s", target)
	}
}

func TestRestore_refusesAnIncompleteBackup(t *testing.T) {
	if _, err := Restore(context.Background(), t.TempDir(), filepath.Join(t.TempDir(), "data")); !errors.Is(err, ErrNoManifest) {
		t.Fatalf("restore of a directory without backup.json: %v, want ErrNoManifest", err)
	}
}
