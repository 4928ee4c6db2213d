package testkit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// StopTimeout is how long Run's stop waits for the component to return
// once its ctx ended.
const StopTimeout = 10 * time.Second

// ReadyTimeout is how long Run waits for the component to be ready.
const ReadyTimeout = 30 * time.Second

// Run runs a long-lived component for the rest of the test, as serve runs
// one of its parts: run (its Run method) in a goroutine, with a context
// of its own. Run returns once ready is closed (nil: at once), failing the
// test if run returns first. stop, which t.Cleanup calls too (so a
// component started after another stops before it), cancels the context
// and waits for run to return; it fails the test if run returned before
// being stopped, returned an error other than context.Canceled, or is
// still running StopTimeout later. Calling stop twice is a no-op.
func Run(t testing.TB, name string, run func(ctx context.Context) error, ready <-chan struct{}) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	var once sync.Once
	stop = func() {
		t.Helper()
		once.Do(func() {
			select {
			case err := <-done:
				cancel()
				t.Errorf("%s: Run returned before being stopped: %v", name, err)
				return
			default:
			}
			cancel()
			select {
			case err := <-done:
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("%s: Run = %v after its stop", name, err)
				}
			case <-time.After(StopTimeout):
				t.Errorf("%s: still running %v after its stop", name, StopTimeout)
			}
		})
	}
	t.Cleanup(stop)
	if ready == nil {
		return stop
	}
	select {
	case <-ready:
		return stop
	case err := <-done:
		once.Do(cancel)
		t.Fatalf("%s: Run returned before it was ready: %v", name, err)
	case <-time.After(ReadyTimeout):
		t.Fatalf("%s: not ready after %v", name, ReadyTimeout)
	}
	return stop
}
