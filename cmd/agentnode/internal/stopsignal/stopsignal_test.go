package stopsignal

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A signal after the call ends the context, its cause naming the signal;
// stop ends it too.
func TestNotifyContext_signalEndsTheContext(t *testing.T) {
	ctx, stop := NotifyContext(context.Background())
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("ctx not done after a SIGTERM")
	}
	if got := context.Cause(ctx).Error(); !strings.Contains(got, "terminated") {
		t.Errorf("cause %q, want the signal named", got)
	}
	other, stopOther := NotifyContext(context.Background())
	stopOther()
	if other.Err() == nil {
		t.Error("stop did not end the context")
	}
}

// Two contexts each see a SIGINT (each call has its own channel).
func TestNotifyContext_eachCallSeesTheSignal(t *testing.T) {
	a, stopA := NotifyContext(context.Background())
	defer stopA()
	b, stopB := NotifyContext(context.Background())
	defer stopB()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for name, ctx := range map[string]context.Context{"a": a, "b": b} {
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute):
			t.Fatalf("%s not done after a SIGINT", name)
		}
	}
}
