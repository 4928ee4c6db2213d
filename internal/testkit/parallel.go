package testkit

import (
	"sync"
	"testing"
)

// Parallel calls fn(i) for every i in [0, n) from workers goroutines
// (worker w takes w, w+workers, w+2*workers, ...; it stops at its first
// error) and, once all have stopped, fails the test with an error one of
// them returned.
func Parallel(t testing.TB, n, workers int, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}
