package relayclient_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
)

// BenchmarkWalk walks 5,000 stored notes in pages of 500 from the
// in-process relay: spread over seconds, and with 2,000 of them in one
// second (read through by ids). It reports queries per walk.
func BenchmarkWalk(b *testing.B) {
	for _, crowded := range []int{0, 2000} {
		b.Run(fmt.Sprintf("crowded=%d", crowded), func(b *testing.B) {
			r := testrelay.Open(b)
			k := testkit.NewKey(b)
			at := nostr.Timestamp(time.Now().Add(-time.Hour).Unix())
			var evts []*nostr.Event
			for i := range 5000 {
				ts := at - nostr.Timestamp(i)
				if i < crowded {
					ts = at
				}
				evt := &nostr.Event{Kind: 1, CreatedAt: ts, Content: fmt.Sprint("note ", i), Tags: nostr.Tags{}}
				if err := evt.Sign(k.SK); err != nil {
					b.Fatal(err)
				}
				evts = append(evts, evt)
			}
			storeB(b, r.Publish, evts)
			b.ResetTimer()
			var done relayclient.Walked
			for b.Loop() {
				var err error
				done, err = relayclient.Walk(context.Background(), r, nostr.Filter{Kinds: []int{1}}, relayclient.Paging{Page: 500}, func([]*nostr.Event) error { return nil })
				if err != nil || done.Events != 5000 {
					b.Fatalf("walked %+v, %v", done, err)
				}
			}
			b.ReportMetric(float64(done.Pages), "queries/walk")
		})
	}
}

// storeB publishes evts with 8 publishers at once.
func storeB(b *testing.B, publish func(context.Context, *nostr.Event) error, evts []*nostr.Event) {
	b.Helper()
	errs := make(chan error, 8)
	for w := range 8 {
		go func() {
			var err error
			for i := w; i < len(evts) && err == nil; i += 8 {
				err = publish(context.Background(), evts[i])
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}
