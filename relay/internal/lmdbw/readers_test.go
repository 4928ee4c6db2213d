package lmdbw

import (
	"testing"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// WaitReaders waits for a read transaction that is still open and returns
// once it ends, so that the environment is never closed under it.
func TestWaitReaders(t *testing.T) {
	w := openWriter(t)
	if ok, err := w.WaitReaders(time.Second); err != nil || !ok {
		t.Fatalf("no transaction open: WaitReaders = %v, %v; want true", ok, err)
	}
	env := w.env
	inside, release, ended := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		ended <- env.View(func(*lmdb.Txn) error {
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	if ok, err := w.WaitReaders(20 * time.Millisecond); err != nil || ok {
		t.Fatalf("a read transaction open: WaitReaders = %v, %v; want false after the timeout", ok, err)
	}
	close(release)
	if ok, err := w.WaitReaders(10 * time.Second); err != nil || !ok {
		t.Fatalf("the read transaction ended: WaitReaders = %v, %v; want true", ok, err)
	}
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
}
