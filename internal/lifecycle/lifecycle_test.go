package lifecycle_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/agentnode/agentnode/internal/lifecycle"
)

// journal records what the parts did, in order.
type journal struct {
	mu  sync.Mutex
	got []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.got = append(j.got, s)
}

func (j *journal) lines() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.got)
}

// waiter is a part that records its start and its stop; it is ready once
// it recorded its start.
func waiter(j *journal, name string) lifecycle.Part {
	ready := make(chan struct{})
	return lifecycle.Ready(name, func(ctx context.Context) error {
		j.add("run " + name)
		close(ready)
		<-ctx.Done()
		j.add("stop " + name)
		return nil
	}, ready)
}

func TestRun_startsInOrderStopsInReverse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j := &journal{}
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- lifecycle.Run(ctx, waiter(j, "a"), waiter(j, "b"), waiter(j, "c")) }()
		synctest.Wait()
		cancel()
		if err := <-errc; err != nil {
			t.Fatalf("Run after a stop: %v, want nil", err)
		}
		want := []string{"run a", "run b", "run c", "stop c", "stop b", "stop a"}
		if got := j.lines(); !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestRun_firstFailureStopsTheRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j := &journal{}
		boom := errors.New("boom")
		fail := make(chan struct{})
		failing := lifecycle.Func("b", func(ctx context.Context) error {
			<-fail
			return boom
		})
		errc := make(chan error, 1)
		go func() { errc <- lifecycle.Run(context.Background(), waiter(j, "a"), failing, waiter(j, "c")) }()
		synctest.Wait()
		close(fail)
		err := <-errc
		if !errors.Is(err, boom) || err.Error() != "b: boom" {
			t.Fatalf("Run = %v, want b: boom", err)
		}
		want := []string{"run a", "run c", "stop c", "stop a"}
		if got := j.lines(); !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestRun_failedStartStopsWhatRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j := &journal{}
		boom := errors.New("boom")
		bad := lifecycle.Ready("b", func(context.Context) error { return boom }, make(chan struct{}))
		err := lifecycle.Run(context.Background(), waiter(j, "a"), bad, waiter(j, "c"))
		if !errors.Is(err, boom) {
			t.Fatalf("Run = %v, want boom", err)
		}
		want := []string{"run a", "stop a"} // c never started
		if got := j.lines(); !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestRun_stopDuringAStartIsNoFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j := &journal{}
		ctx, cancel := context.WithCancel(context.Background())
		slow := lifecycle.Ready("b", func(ctx context.Context) error {
			cancel() // the stop arrives while b starts
			<-ctx.Done()
			return ctx.Err()
		}, make(chan struct{}))
		if err := lifecycle.Run(ctx, waiter(j, "a"), slow, waiter(j, "c")); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		want := []string{"run a", "stop a"}
		if got := j.lines(); !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestRun_returningEarlyIsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j := &journal{}
		quits := lifecycle.Func("b", func(context.Context) error { return nil })
		err := lifecycle.Run(context.Background(), waiter(j, "a"), quits)
		if !errors.Is(err, lifecycle.ErrReturned) {
			t.Fatalf("Run = %v, want ErrReturned", err)
		}
	})
}

func TestRun_readyPartHoldsTheNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j := &journal{}
		ready := make(chan struct{})
		subscribed := make(chan struct{})
		slow := lifecycle.Ready("b", func(ctx context.Context) error {
			<-subscribed
			j.add("ready b")
			close(ready)
			<-ctx.Done()
			return nil
		}, ready)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- lifecycle.Run(ctx, waiter(j, "a"), slow, waiter(j, "c")) }()
		synctest.Wait()
		if got := j.lines(); !slices.Equal(got, []string{"run a"}) {
			t.Fatalf("before b is ready: %q", got)
		}
		close(subscribed)
		synctest.Wait()
		cancel()
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		want := []string{"run a", "ready b", "run c", "stop c", "stop a"}
		if got := j.lines(); !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}
