package negsync

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// download fetches ids from the remote in batches and stores them here.
func download(ctx context.Context, conn *relayclient.Conn, local Local, ids []string, batch int, res *Result) error {
	for start := 0; start < len(ids); start += batch {
		part := ids[start:min(start+batch, len(ids))]
		evts, err := conn.Query(ctx, nostr.Filters{{IDs: part, Limit: len(part)}})
		if err != nil {
			return err
		}
		storeAll(ctx, local, evts, res)
	}
	return nil
}

// storeWorkers is how many events are stored at once (the relay commits
// concurrent writes together).
const storeWorkers = 16

// storeAll publishes evts locally, storeWorkers at a time, and counts.
func storeAll(ctx context.Context, local Local, evts []*nostr.Event, res *Result) {
	errs := make([]error, len(evts))
	var wg sync.WaitGroup
	next := make(chan int)
	for range storeWorkers {
		wg.Go(func() {
			for i := range next {
				errs[i] = local.Publish(ctx, evts[i])
			}
		})
	}
	for i := range evts {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			res.Refused++
			res.LastRefusal = err.Error()
			continue
		}
		res.Downloaded++
	}
}

// uploadWorkers is how many events are in flight to the remote at once.
const uploadWorkers = 16

// upload publishes the local events ids name to the remote, a batch at a
// time, each batch with uploadWorkers events in flight.
func upload(ctx context.Context, conn *relayclient.Conn, local Local, ids []string, batch int, res *Result) error {
	for start := 0; start < len(ids); start += batch {
		part := ids[start:min(start+batch, len(ids))]
		evts, err := local.QuerySync(ctx, nostr.Filter{IDs: part, Limit: len(part)})
		if err != nil {
			return err
		}
		if err := publishAll(ctx, conn, evts, res); err != nil {
			return err
		}
	}
	return nil
}

// publishAll publishes evts with uploadWorkers in flight; the results are
// added to res.
func publishAll(ctx context.Context, conn *relayclient.Conn, evts []*nostr.Event, res *Result) error {
	jobs := make(chan *nostr.Event)
	errs := make(chan error, len(evts))
	done := make(chan struct{})
	for range uploadWorkers {
		go func() {
			defer func() { done <- struct{}{} }()
			for evt := range jobs {
				errs <- publishPatiently(ctx, conn, evt)
			}
		}()
	}
	for _, evt := range evts {
		jobs <- evt
	}
	close(jobs)
	for range uploadWorkers {
		<-done
	}
	close(errs)
	for err := range errs {
		var refused *relayclient.RefusedError
		switch {
		case err == nil:
			res.Uploaded++
		case errors.As(err, &refused):
			res.Refused++
			res.LastRefusal = refused.Reason
		default:
			return err
		}
	}
	return nil
}

// publishPatiently publishes evt, waiting and retrying (up to 6 times,
// 0.5 s doubling) while the remote answers "rate-limited:".
func publishPatiently(ctx context.Context, conn *relayclient.Conn, evt *nostr.Event) error {
	wait := 500 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := conn.Publish(ctx, evt)
		var refused *relayclient.RefusedError
		if !errors.As(err, &refused) || !strings.HasPrefix(refused.Reason, "rate-limited:") || attempt == 5 {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait *= 2
	}
}
