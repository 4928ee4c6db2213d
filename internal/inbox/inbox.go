package inbox

import (
	"context"
	"sync"

	"github.com/nbd-wtf/go-nostr"
)

// Keys returns a local agent's secret key (hex); ok is false for a pubkey
// that is not a local agent.
type Keys func(ctx context.Context, pubkey string) (sk string, ok bool)

// Addressee is the first local agent evt p-tags, with its secret key; ok
// is false when evt p-tags none.
func Addressee(ctx context.Context, evt *nostr.Event, keys Keys) (agent, sk string, ok bool) {
	for _, t := range evt.Tags {
		if len(t) >= 2 && t[0] == "p" {
			if sk, ok := keys(ctx, t[1]); ok {
				return t[1], sk, true
			}
		}
	}
	return "", "", false
}

// Work starts n workers on wg, each calling serve with the items of queue
// one at a time until ctx ends. The caller owns them: it cancels ctx and
// waits on wg. Items still queued when ctx ends are not served.
func Work[T any](ctx context.Context, wg *sync.WaitGroup, n int, queue <-chan T, serve func(context.Context, T)) {
	for range n {
		wg.Go(func() { drain(ctx, queue, serve) })
	}
}

// drain serves queue's items until ctx ends.
func drain[T any](ctx context.Context, queue <-chan T, serve func(context.Context, T)) {
	for {
		select {
		case <-ctx.Done():
			return
		case item := <-queue:
			serve(ctx, item)
		}
	}
}
