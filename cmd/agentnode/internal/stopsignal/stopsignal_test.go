package stopsignal

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A signal that comes before NotifyContext is called (while the process
// still initialises) ends the context all the same.
func TestNotifyContext_signalBeforeTheCall(t *testing.T) {
	Catch()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitCaught(t)
	ctx, stop := NotifyContext(context.Background())
	defer stop()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("ctx not done after a SIGTERM caught before NotifyContext")
	}
	if got := context.Cause(ctx).Error(); !strings.Contains(got, "terminated") {
		t.Errorf("cause %q, want the signal named", got)
	}
}

// A signal after the call ends the context; stop ends it too.
func TestNotifyContext_signalAfterTheCall(t *testing.T) {
	Catch()
	ctx, stop := NotifyContext(context.Background())
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("ctx not done after a SIGINT")
	}
	other, stopOther := NotifyContext(context.Background())
	stopOther()
	if other.Err() == nil {
		t.Error("stop did not end the context")
	}
}

// waitCaught polls until the signal is in the buffer (delivery is asynchronous).
func waitCaught(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(caught) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the signal was not caught")
		}
		time.Sleep(time.Millisecond) // signal delivery has nothing to wait on
	}
}
