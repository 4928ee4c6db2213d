// Package pgtest starts a throwaway PostgreSQL cluster for the tests of a
// package: initdb into a temp dir (as the postgres OS user when the tests
// run as root), a free port on 127.0.0.1, the -k socket dir inside the temp
// dir, trust authentication. The cluster is started once per test binary, on
// first use, and is stopped and removed when the binary ends. Each call to
// URL creates a fresh database in it, so tests do not see each other's rows.
//
// It uses Debian's server binaries (/usr/lib/postgresql/N/bin, or initdb and
// pg_ctl on PATH); `make postgres` installs them. Where they are absent, or
// the cluster cannot start, URL skips the test and says why. Never a mock.
//
// Use it from a package's tests:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestStore_Save(t *testing.T) {
//		url := pgtest.URL(t) // postgres://postgres@127.0.0.1:PORT/t_1?sslmode=disable
//		st, err := pgstore.Open(ctx, url)
//		...
//	}
//
// The server runs with fsync=off; PGTEST_FSYNC=on keeps fsync for durable
// figures (go test -bench).
//
// Without the TestMain the cluster is still removed, but only by the process
// exit's best effort; with it, Main stops the server after m.Run.
package pgtest
