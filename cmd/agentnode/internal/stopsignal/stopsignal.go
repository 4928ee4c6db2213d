package stopsignal

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// Signals are the signals that stop the process.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// caught buffers the first stop signal until NotifyContext is called.
var caught = make(chan os.Signal, 1)

func init() {
	if !isTestBinary(os.Args[0]) { // a test binary never runs main: leave ^C to the go command
		Catch()
	}
}

// isTestBinary reports whether name is a `go test` binary's (pkg.test).
// Not strings.HasSuffix: every import delays this package's init.
func isTestBinary(name string) bool {
	const suffix = ".test"
	return len(name) >= len(suffix) && name[len(name)-len(suffix):] == suffix
}

// Catch starts catching Signals (init does, except in test binaries).
func Catch() { signal.Notify(caught, Signals...) }

// NotifyContext is like signal.NotifyContext for Signals, counting the
// signals caught since Catch: ctx ends at the first one, even one that
// came before the call. stop ends ctx and gives the signals back their
// default behaviour (a second ^C kills).
func NotifyContext(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		select {
		case sig := <-caught:
			cancel(errors.New(sig.String() + " signal received"))
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(caught)
		cancel(context.Canceled)
	}
}
