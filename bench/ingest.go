package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// IngestFigures are one ingest run: events sent over one websocket with at
// most Window in flight, each waiting for its OK.
type IngestFigures struct {
	Window          int     `json:"window"`
	Sent            int     `json:"sent"`
	OK              int     `json:"ok"` // OK=true answers
	Seconds         float64 `json:"seconds"`
	EventsPerSecond float64 `json:"events_per_second"` // OK=true answers per second
	P50Ms           float64 `json:"ok_latency_p50_ms"` // EVENT sent -> OK received
	P99Ms           float64 `json:"ok_latency_p99_ms"`
	FirstError      string  `json:"first_error,omitempty"`
}

// errNotSent marks an event the run ended before sending.
var errNotSent = errors.New("not sent")

// ingest sends evts to url over one go-nostr connection, window at a time.
func ingest(ctx context.Context, url string, evts []*nostr.Event, window int) (IngestFigures, error) {
	conn, err := nostr.RelayConnect(ctx, url)
	if err != nil {
		return IngestFigures{}, fmt.Errorf("connect %s: %w", url, err)
	}
	defer conn.Close()
	lat := make([]time.Duration, len(evts))
	errs := make([]error, len(evts))
	for i := range errs {
		errs[i] = errNotSent
	}
	start := time.Now()
	publishAll(ctx, conn, evts, window, lat, errs)
	elapsed := time.Since(start)
	return ingestFigures(window, elapsed, lat, errs), ctx.Err()
}

// publishAll publishes evts with window workers, recording each event's
// OK latency and error by index.
func publishAll(ctx context.Context, conn *nostr.Relay, evts []*nostr.Event, window int, lat []time.Duration, errs []error) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range window {
		wg.Go(func() {
			for i := range jobs {
				t := time.Now()
				errs[i] = publish(ctx, conn, evts[i])
				lat[i] = time.Since(t)
			}
		})
	}
	defer wg.Wait()
	defer close(jobs)
	for i := range evts {
		select {
		case jobs <- i:
		case <-ctx.Done():
			return
		}
	}
}

// okTimeout is how long a client waits for an event's OK. go-nostr's own
// default (7 s) would turn a slow relay into failed events.
const okTimeout = 60 * time.Second

// publish sends evt and waits for its OK.
func publish(ctx context.Context, conn *nostr.Relay, evt *nostr.Event) error {
	ctx, cancel := context.WithTimeout(ctx, okTimeout)
	defer cancel()
	return conn.Publish(ctx, *evt)
}

// ingestFigures summarises one run.
func ingestFigures(window int, elapsed time.Duration, lat []time.Duration, errs []error) IngestFigures {
	f := IngestFigures{Window: window, Sent: len(lat), Seconds: elapsed.Seconds(),
		P50Ms: percentile(lat, 0.50), P99Ms: percentile(lat, 0.99)}
	for _, err := range errs {
		if err == nil {
			f.OK++
		} else if f.FirstError == "" {
			f.FirstError = err.Error()
		}
	}
	f.EventsPerSecond = float64(f.OK) / elapsed.Seconds()
	return f
}
