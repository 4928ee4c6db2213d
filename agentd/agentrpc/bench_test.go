package agentrpc_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// BenchmarkMessageRoundTrip is agent/message over HTTP POST to a local
// agent whose Messenger answers at once: the endpoint's own cost (decode,
// checks, dispatch, encode, HTTP on loopback), the model excluded. It
// reports p50 and p99 in microseconds.
func BenchmarkMessageRoundTrip(b *testing.B) {
	f := newFixture(b)
	srv := httptest.NewServer(withToken(f.svc))
	defer srv.Close()
	body := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"agent/message","params":{"source":%q,"target":%q,`+
		`"content":{"type":"request","payload":{"messages":[{"text":"ping"}]}},"_meta":{"correlationId":"bench"}}}`, alice.pk, bob.pk))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		resp, err := client.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(start))
		if resp.StatusCode != 200 || !bytes.Contains(out, []byte("bob heard: ping")) {
			b.Fatalf("%d %s", resp.StatusCode, out)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkMessageRoundTripRemote is agent/message over HTTP to node A for
// an agent on node B: A signs, encrypts (NIP-44) and publishes a kind 25910
// to B's relay over a websocket, B's Service answers through its Messenger
// (at once), A reads the encrypted reply. p50 and p99 in microseconds.
func BenchmarkMessageRoundTripRemote(b *testing.B) {
	n := startTwoNodes(b)
	body := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"agent/message","params":{"source":%q,"target":%q,`+
		`"content":{"type":"request","payload":{"messages":[{"text":"ping"}]}},"_meta":{"correlationId":"bench"}}}`, alice.pk, bob.pk))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		resp, err := http.Post(n.aURL, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(start))
		if !bytes.Contains(out, []byte("bob heard: ping")) {
			b.Fatalf("%s", out)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
