package cap_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/jsonrpc"
)

type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(l[len(l)*99/100].Nanoseconds())/1e3, "p99-µs")
}

var benchInput = json.RawMessage(`{"text":"the quick brown fox jumps over the lazy dog"}`)

// BenchmarkInvoke: CAP's overhead around an in-process tool. "direct"
// calls the tool function; "host" goes through Host.Invoke (lookup, input
// validation against input_schema, deadline, output validation).
func BenchmarkInvoke(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		lat := make(latencies, 0, b.N)
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if _, err := wordCount(context.Background(), benchInput); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		lat.report(b)
	})
	b.Run("host", func(b *testing.B) {
		host := cap.NewHost(newSource(), cap.Options{})
		ref := cap.Ref{CapabilityID: "cap:word_count", Version: "1.0.0"}
		lat := make(latencies, 0, b.N)
		for i := 0; i < b.N; i++ {
			start := time.Now()
			res := host.Invoke(context.Background(), agentA, ref, benchInput)
			lat = append(lat, time.Since(start))
			if !res.OK {
				b.Fatal(res.Error)
			}
		}
		lat.report(b)
	})
}

// BenchmarkJSONRPC_HTTP: capability.invoke over a real HTTP round trip
// (keep-alive client, httptest server on loopback).
func BenchmarkJSONRPC_HTTP(b *testing.B) {
	s := jsonrpc.NewServer(jsonrpc.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	cap.RegisterJSONRPC(s, cap.NewHost(newSource(), cap.Options{}), func(context.Context) (string, error) { return agentA, nil })
	srv := httptest.NewServer(s)
	defer srv.Close()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"capability.invoke","params":{"ref":{"capability_id":"cap:word_count","version":"1.0.0"},"input":` + string(benchInput) + `}}`)
	client := srv.Client()
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		resp, err := client.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(start))
		if !bytes.Contains(out, []byte(`"ok":true`)) {
			b.Fatalf("%s", out)
		}
	}
	b.StopTimer()
	lat.report(b)
}
