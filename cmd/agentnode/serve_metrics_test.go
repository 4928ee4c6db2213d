package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
)

// scrape reads the node's /metrics with the Prometheus text parser and
// returns each sample's value by "name{label=value,...}" (labels in the
// exposition's order).
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			out[sampleKey(name, m)] = sampleValue(m)
		}
	}
	return out
}

func sampleKey(name string, m *dto.Metric) string {
	key := name
	for i, l := range m.GetLabel() {
		sep := ","
		if i == 0 {
			sep = "{"
		}
		key += sep + l.GetName() + "=" + l.GetValue()
	}
	if len(m.GetLabel()) > 0 {
		key += "}"
	}
	return key
}

func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

// TestServe_Metrics scrapes a served node's /metrics before and after a
// websocket client connects, publishes a definition and has an invalid
// one refused: the connection gauge, the stored counter of kind 4199 and
// the refused counter of reason "invalid" move.
func TestServe_Metrics(t *testing.T) {
	n := waitServing(t, startServe(t))
	before := scrape(t, n.Addr())
	if _, ok := before["agentnode_relay_slow_consumers_total"]; !ok {
		t.Fatalf("no agentnode_relay_slow_consumers_total in %v", before)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := relayclient.Dial(ctx, "ws://"+n.Addr(), relayclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sk := testkit.NewKey(t).SK
	if err := conn.Publish(ctx, signed(t, sk, nostr.Event{Kind: 4199, Tags: nostr.Tags{{"title", "Metered"}}})); err != nil {
		t.Fatalf("publish a definition: %v", err)
	}
	if err := conn.Publish(ctx, signed(t, sk, nostr.Event{Kind: 4199, Tags: nostr.Tags{{"role", "no title"}}})); err == nil {
		t.Fatal("a definition without a title was stored")
	}
	sub, err := conn.Subscribe(ctx, nostr.Filters{{Kinds: []int{9999}, Limit: 1}}) // nothing stored: EOSE comes at once
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	<-sub.EOSE
	after := scrape(t, n.Addr())
	// The node writes and subscribes on its own too (heartbeats, its own
	// clients): these move by at least what the test did.
	for _, key := range []string{"agentnode_relay_subscriptions", "agentnode_relay_commit_batches_total", "agentnode_relay_commit_writes_total"} {
		if after[key]-before[key] < 1 {
			t.Errorf("%s moved by %v, want at least 1", key, after[key]-before[key])
		}
	}
	if after["agentnode_relay_commit_seconds_total"] <= before["agentnode_relay_commit_seconds_total"] {
		t.Error("agentnode_relay_commit_seconds_total did not move")
	}
	for _, c := range []struct {
		key  string
		want float64
	}{
		{"agentnode_events_stored_total{kind=4199}", 1},
		{"agentnode_events_refused_total{reason=invalid}", 1},
		{"agentnode_relay_connections", 1},
	} {
		if got := after[c.key] - before[c.key]; got != c.want {
			t.Errorf("%s moved by %v, want %v (before %v, after %v)", c.key, got, c.want, before[c.key], after[c.key])
		}
	}
}
