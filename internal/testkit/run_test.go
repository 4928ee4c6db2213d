package testkit_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentnode/agentnode/internal/testkit"
)

// recorder is a testing.TB that records failures and cleanups instead of
// acting on them (Fatalf ends the calling goroutine, as testing's does).
type recorder struct {
	testing.TB
	failures []string
	cleanups []func()
}

func (r *recorder) Helper()          {}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, a ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.Errorf(format, a...)
	runtime.Goexit()
}

// cleanup runs the recorded cleanups, last first.
func (r *recorder) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// run calls testkit.Run on r in a goroutine of its own (Fatalf ends it)
// and returns its stop (nil after a Fatalf).
func (r *recorder) run(name string, fn func(context.Context) error, ready <-chan struct{}) (stop func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		stop = testkit.Run(r, name, fn, ready)
	}()
	<-done
	return stop
}

func TestRun(t *testing.T) {
	boom := errors.New("boom")
	for _, tt := range []struct {
		name    string
		ready   bool // pass a ready channel the run closes
		run     func(ctx context.Context, ready chan struct{}) error
		failure string // "": none
	}{
		{"ready, stopped", true, func(ctx context.Context, ready chan struct{}) error {
			time.Sleep(time.Second)
			close(ready)
			<-ctx.Done()
			return ctx.Err()
		}, ""},
		{"nil ready", false, func(ctx context.Context, _ chan struct{}) error { <-ctx.Done(); return nil }, ""},
		{"fails before ready", true, func(context.Context, chan struct{}) error { return boom }, "returned before it was ready: boom"},
		{"never ready", true, func(ctx context.Context, _ chan struct{}) error { <-ctx.Done(); return nil }, "not ready after"},
		{"returns early", false, func(context.Context, chan struct{}) error { return nil }, "returned before being stopped"},
		{"fails at its stop", false, func(ctx context.Context, _ chan struct{}) error { <-ctx.Done(); return boom }, "after its stop"},
		{"slow to stop", false, func(ctx context.Context, _ chan struct{}) error {
			<-ctx.Done()
			time.Sleep(testkit.StopTimeout + time.Second)
			return nil
		}, "still running"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := &recorder{TB: t}
				var ready chan struct{}
				if tt.ready {
					ready = make(chan struct{})
				}
				stop := r.run("part", func(ctx context.Context) error { return tt.run(ctx, ready) }, ready)
				if stop != nil {
					synctest.Wait()
					stop()
					stop() // a no-op
				}
				r.cleanup()
				time.Sleep(2 * testkit.StopTimeout) // (fake time) a slow run returns before the bubble ends
				switch {
				case tt.failure == "" && len(r.failures) > 0:
					t.Errorf("failures %q, want none", r.failures)
				case tt.failure != "" && (len(r.failures) != 1 || !strings.Contains(r.failures[0], tt.failure)):
					t.Errorf("failures %q, want one with %q", r.failures, tt.failure)
				}
			})
		})
	}
}
