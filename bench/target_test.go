package bench

import (
	"os"
	"strings"
	"testing"
)

// TestTargets_Smoke runs the query, ingest and fan-out workloads against a
// running relay (plain khatru served on a loopback port, its pid this
// process's) beside the in-process ones.
func TestTargets_Smoke(t *testing.T) {
	if testing.Short() {
		t.Skip("opens several relays and fsyncs on disk")
	}
	ctx := t.Context()
	s, err := serve(ctx, openers[1], t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer closeServer(s, &err)
	target := Target{Name: "remote", URL: s.URL, PID: os.Getpid()}

	rep, err := RunRelay(ctx, RelayOptions{Stored: 300, Defs: 10, Queries: 10, Dir: t.TempDir(), Seed: 1,
		Phases: []string{PhaseQuery}, Targets: []Target{target}})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.relay("remote")
	if f == nil || f.Target != s.URL || f.Load.Refused != 0 {
		t.Fatalf("target figures: %+v", f)
	}
	checkQueries(t, "remote lessons-of-def", f.LessonsOfDef, 10)
	if f.LessonsParallel.PerSecond <= 0 || f.LessonsParallel.Queries != parallelShare*10 {
		t.Errorf("parallel: %+v", f.LessonsParallel)
	}
	checkNote(t, rep, "10 of 10 queries returned the same events on remote")
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil || !strings.Contains(b.String(), "remote") {
		t.Errorf("table (%v):\n%s", err, b.String())
	}

	ing, err := RunIngest(ctx, IngestOptions{Events: 20, Conns: 2, Window: 4, Dir: t.TempDir(), Seed: 2, Targets: []Target{target}})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range ing.Scenarios {
		if r := sc.Runs[len(sc.Runs)-1]; r.Relay != "remote" || r.OK != 20 || r.CPUPer1000 < 0 {
			t.Errorf("%s: %+v", sc.Name, r)
		}
	}
	fan, err := RunFanout(ctx, FanoutOptions{Subs: 10, Conns: 2, Events: 3, Dir: t.TempDir(), Targets: []Target{target}})
	if err != nil {
		t.Fatal(err)
	}
	if r := fan.Relays[len(fan.Relays)-1]; r.Relay != "remote" || r.Events != 3 {
		t.Errorf("fan-out: %+v", r)
	}
}

func TestProcCPU_ReadsThisProcess(t *testing.T) {
	if d, ok := procCPU(os.Getpid()); !ok || d < 0 {
		t.Errorf("procCPU: %v, %v", d, ok)
	}
	if _, ok := procCPU(-1); ok {
		t.Error("procCPU of no process: ok")
	}
}
