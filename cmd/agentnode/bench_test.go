package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBench_UnknownOrMissingSubcommandIsAUsageError(t *testing.T) {
	for _, args := range [][]string{{"bench"}, {"bench", "everything"}, {"bench", "ingest", "extra"}} {
		res := cli(t, nil, args...)
		if code := exitCode(res.err); res.err == nil || code != 2 {
			t.Errorf("%v: err %v (exit %d), want a usage error", args, res.err, code)
		}
	}
}

func TestBench_IngestPrintsBothRelaysPerScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("opens six relays and fsyncs on disk")
	}
	res := cli(t, nil, "bench", "ingest", "--events", "20", "--conns", "2", "--window", "4", "--dir", t.TempDir(), "--seed", "3")
	if res.err != nil {
		t.Fatalf("%v: %s", res.err, res.stderr)
	}
	for _, want := range []string{"1 publisher, 1 in flight:", "1 publisher, 64 in flight:", "2 publishers, 4 in flight each:",
		"events/s (OK true)", "OK latency p50/p99 (ms)", "CPU s per 1,000 events", "peak RSS (MiB)", "agentnode", "khatru+lmdb"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, res.stdout)
		}
	}
}

func TestBench_FanoutJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("opens two relays")
	}
	res := cli(t, nil, "bench", "fanout", "--subs", "40", "--conns", "4", "--events", "3", "--dir", t.TempDir(), "--json")
	if res.err != nil {
		t.Fatalf("%v: %s", res.err, res.stderr)
	}
	var rep struct {
		Relays []struct {
			Relay  string  `json:"relay"`
			Events int     `json:"events"`
			P50Ms  float64 `json:"p50_ms"`
		} `json:"relays"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, res.stdout)
	}
	if len(rep.Relays) != 2 || rep.Relays[0].Relay != "agentnode" || rep.Relays[1].Relay != "khatru+lmdb" {
		t.Fatalf("relays %+v", rep.Relays)
	}
	for _, r := range rep.Relays {
		if r.Events != 3 || r.P50Ms <= 0 {
			t.Errorf("%s: %d events, p50 %v ms", r.Relay, r.Events, r.P50Ms)
		}
	}
}
