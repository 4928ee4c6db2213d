package bench

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// load stores evts into rut in-process on every CPU and counts refusals.
func load(ctx context.Context, rut relayUnderTest, evts []*nostr.Event, how string) LoadFigures {
	var next atomic.Int64
	var refused atomic.Int64
	var firstErr sync.Once
	f := LoadFigures{Events: len(evts), How: how}
	start := time.Now()
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(evts)) && ctx.Err() == nil; i = next.Add(1) - 1 {
				if err := rut.Load(ctx, evts[i]); err != nil {
					refused.Add(1)
					firstErr.Do(func() { f.FirstError = err.Error() })
				}
			}
		})
	}
	wg.Wait()
	f.Seconds = time.Since(start).Seconds()
	f.Refused = int(refused.Load())
	return f
}
