package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
)

// A Part is one long-lived component, named for errors and logs.
type Part struct {
	name string
	// run runs the part until ctx ends; it calls ready once the parts
	// after it may start (Func parts are ready at once).
	run func(ctx context.Context, ready func()) error
}

// Func is a part whose run owns its goroutines and returns when ctx ends;
// the next part starts at once.
func Func(name string, run func(ctx context.Context) error) Part {
	return Part{name: name, run: func(ctx context.Context, ready func()) error {
		ready()
		return run(ctx)
	}}
}

// Ready is a part whose run closes ready once the parts after it may start
// (it subscribed, it loaded); the next part waits for that, or for run to
// fail.
func Ready(name string, run func(ctx context.Context) error, ready <-chan struct{}) Part {
	return Part{name: name, run: func(ctx context.Context, signal func()) error {
		ended := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			select {
			case <-ready:
				signal()
			case <-ended:
			}
		})
		defer wg.Wait()
		defer close(ended)
		return run(ctx)
	}}
}

// ErrReturned is a part's failure when it returned nil without being
// asked to stop.
var ErrReturned = errors.New("returned before being stopped")

// Run starts parts in order, each once the one before is ready, and runs
// them until ctx ends or a part fails (returns an error, or returns at all
// while it was not asked to stop). Then it stops the running parts in
// reverse order, each after the one started after it has returned, and
// returns the first failure, or nil. A part's error that wraps
// context.Canceled once it was asked to stop is no failure.
func Run(ctx context.Context, parts ...Part) error {
	g, failed := errgroup.WithContext(ctx)
	var stops []context.CancelFunc
	var dones []chan struct{}
	for _, p := range parts {
		// Each part has its own context: ctx ending stops the parts one by
		// one, in reverse order, not all at once.
		pctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		ready, done := make(chan struct{}), make(chan struct{})
		stops, dones = append(stops, stop), append(dones, done)
		g.Go(func() error {
			defer close(done)
			var once sync.Once
			err := p.run(pctx, func() { once.Do(func() { close(ready) }) })
			if err == nil && pctx.Err() == nil {
				err = ErrReturned
			}
			if err != nil && (pctx.Err() == nil || !errors.Is(err, context.Canceled)) {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			return nil
		})
		select { // a stop or a failure while p starts: its own stop, first below, ends the start
		case <-ready:
		case <-failed.Done():
		}
		if failed.Err() != nil {
			break
		}
	}
	<-failed.Done()
	for i := len(stops) - 1; i >= 0; i-- {
		stops[i]()
		<-dones[i]
	}
	return g.Wait()
}
