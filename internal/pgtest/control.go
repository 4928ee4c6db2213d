package pgtest

import "testing"

// Stop stops the package's cluster (a fast shutdown: every client is
// disconnected) and keeps its files and port, so that Start brings the
// same databases back at the same URLs: for tests of what a client does
// while its database is down. Call URL first; restart with Start (a
// t.Cleanup does if the test does not).
func Stop(t testing.TB) {
	t.Helper()
	if shared == nil {
		t.Fatal("pgtest: Stop before URL")
	}
	if err := shared.run("pg_ctl", "-D", shared.data(), "-m", "fast", "-w", "stop"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shared.startAt(shared.port) }) // no-op error if Start ran
}

// Start starts the cluster Stop stopped, on the same port.
func Start(t testing.TB) {
	t.Helper()
	if shared == nil {
		t.Fatal("pgtest: Start before URL")
	}
	if err := shared.startAt(shared.port); err != nil {
		t.Fatal(err)
	}
}
