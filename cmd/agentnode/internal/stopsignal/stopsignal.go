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

// NotifyContext is like signal.NotifyContext for Signals, with the signal
// named in the context's cause: ctx ends at the first one caught from this
// call on. stop ends ctx and gives the signals back their default
// behaviour (a second ^C kills). The goroutine that waits for the signal
// ends with ctx.
func NotifyContext(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, Signals...)
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
