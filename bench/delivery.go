package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// DeliveryOptions configure RunDelivery.
type DeliveryOptions struct {
	// Pairs are "from→to" routes: events published on From, received by a
	// live subscription on To (the same URL: an instance's own delivery).
	Pairs []DeliveryPair
	// Events is how many events each pair publishes, one at a time.
	Events int
}

// DeliveryPair is one route measured.
type DeliveryPair struct {
	Name     string `json:"name"`
	From, To string
}

// DefaultDeliveryEvents is the events per pair of a delivery run.
const DefaultDeliveryEvents = 1000

// DeliveryReport is the live-delivery latency of every pair.
type DeliveryReport struct {
	Machine Machine           `json:"machine"`
	Events  int               `json:"events"`
	Pairs   []DeliveryFigures `json:"pairs"`
}

// DeliveryFigures are one pair's figures: the time from writing an EVENT
// on From to reading it on To's subscription (one machine, one clock),
// and the EVENT→OK time on From, for comparison.
type DeliveryFigures struct {
	Name      string  `json:"name"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	Delivered int     `json:"delivered"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
	OKP50Ms   float64 `json:"ok_p50_ms"`
}

// RunDelivery measures live delivery: for each pair, a subscription on To
// for a fresh key's kind-1 notes, then Events notes published on From one
// at a time (the next after the previous one's OK and delivery).
func RunDelivery(ctx context.Context, opts DeliveryOptions) (*DeliveryReport, error) {
	orDefault(&opts.Events, DefaultDeliveryEvents)
	rep := &DeliveryReport{Machine: describeMachine("", ""), Events: opts.Events}
	for _, p := range opts.Pairs {
		f, err := deliveryPair(ctx, p, opts.Events)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", p.Name, err)
		}
		rep.Pairs = append(rep.Pairs, f)
	}
	return rep, nil
}

func deliveryPair(ctx context.Context, p DeliveryPair, n int) (DeliveryFigures, error) {
	f := DeliveryFigures{Name: p.Name, From: p.From, To: p.To}
	sub, err := dial(ctx, p.To)
	if err != nil {
		return f, err
	}
	defer sub.c.Close()
	pub, err := dial(ctx, p.From)
	if err != nil {
		return f, err
	}
	defer pub.c.Close()
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	if err := sub.req("d", nostr.Filter{Authors: []string{pk}, Kinds: []int{1}, Limit: 1}); err != nil {
		return f, err
	}
	if err := sub.readUntil(prefixEOSE); err != nil {
		return f, err
	}
	var lat, okLat []time.Duration
	for i := range n {
		evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: fmt.Sprintf("delivery %d", i)}
		evt.Sign(sk)
		msg, _ := nostr.EventEnvelope{Event: evt}.MarshalJSON()
		start := time.Now()
		if err := pub.c.WriteMessage(websocket.TextMessage, msg); err != nil {
			return f, err
		}
		if err := pub.readUntil([]byte(`["OK",`)); err != nil {
			return f, err
		}
		okLat = append(okLat, time.Since(start))
		if err := sub.readUntil(prefixEvent); err != nil {
			return f, err
		}
		lat = append(lat, time.Since(start))
	}
	f.Delivered = len(lat)
	f.P50Ms, f.P99Ms, f.MaxMs, f.OKP50Ms = percentile(lat, 0.5), percentile(lat, 0.99), percentile(lat, 1), percentile(okLat, 0.5)
	return f, nil
}

// readUntil reads frames until one starts with prefix (wsTimeout).
func (w *wsConn) readUntil(prefix []byte) error {
	w.c.SetReadDeadline(time.Now().Add(wsTimeout))
	for {
		_, msg, err := w.c.ReadMessage()
		if err != nil {
			return err
		}
		if strings.HasPrefix(string(msg), string(prefix)) {
			return nil
		}
		if strings.HasPrefix(string(msg), string(prefixClosed)) {
			return errClosed
		}
	}
}

// WriteTable prints the report.
func (r *DeliveryReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "live delivery: %d kind-1 events per route, one at a time (publish -> EVENT on the subscription)\n", r.Events)
	fmt.Fprintf(w, "%-28s %10s %10s %10s %12s\n", "route", "p50 ms", "p99 ms", "max ms", "OK p50 ms")
	for _, p := range r.Pairs {
		fmt.Fprintf(w, "%-28s %10.2f %10.2f %10.2f %12.2f\n", p.Name, p.P50Ms, p.P99Ms, p.MaxMs, p.OKP50Ms)
	}
	m := r.Machine
	_, err := fmt.Fprintf(w, "machine: %s/%s, %d CPUs, %s\n", m.GOOS, m.GOARCH, m.NumCPU, m.GoVersion)
	return err
}
