package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// Defaults of RunIngest.
const (
	DefaultIngestEvents = 5000
	DefaultIngestConns  = 8
	DefaultIngestWindow = 32
)

// IngestOptions configure RunIngest. Zero fields take the defaults.
type IngestOptions struct {
	Events int    // events per scenario (the same events for both relays)
	Conns  int    // connections of the many-publishers scenario
	Window int    // events in flight per connection in the many-publishers scenario
	Dir    string // parent of the data dirs (a real disk); default os.TempDir()
	Seed   uint64
	// Targets are running relays measured beside the in-process ones.
	Targets []Target `json:"targets,omitempty"`

	Progress io.Writer `json:"-"`
}

func (o IngestOptions) withDefaults() IngestOptions {
	orDefault(&o.Events, DefaultIngestEvents)
	orDefault(&o.Conns, DefaultIngestConns)
	orDefault(&o.Window, DefaultIngestWindow)
	o.Dir = orTempDir(o.Dir)
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	return o
}

// IngestReport is what RunIngest measured.
type IngestReport struct {
	Machine   Machine          `json:"machine"`
	Options   IngestOptions    `json:"options"`
	SigCPU    float64          `json:"sig_check_cpu_seconds_per_1000"` // BIP-340 check alone, this build
	Scenarios []IngestScenario `json:"scenarios"`
	Notes     []string         `json:"notes"`
}

// IngestScenario is one workload run against both relays.
type IngestScenario struct {
	Name   string      `json:"name"`
	Conns  int         `json:"conns"`
	Window int         `json:"window"` // in flight per connection
	Runs   []IngestRun `json:"runs"`   // agentnode, then khatru+lmdb
}

// IngestRun is one relay's figures in one scenario.
type IngestRun struct {
	Relay           string  `json:"relay"`
	Sent            int     `json:"sent"`
	OK              int     `json:"ok"`
	Seconds         float64 `json:"seconds"`
	EventsPerSecond float64 `json:"events_per_second"` // OK=true answers per second
	P50Ms           float64 `json:"ok_latency_p50_ms"`
	P99Ms           float64 `json:"ok_latency_p99_ms"`
	CPUPer1000      float64 `json:"cpu_seconds_per_1000"` // whole process: relay and bench client
	PeakRSSMiB      float64 `json:"peak_rss_mib"`         // whole process, during the run
	FirstError      string  `json:"first_error,omitempty"`
}

// RunIngest measures durable ingest of signed lessons over websockets for
// agentnode and plain khatru+lmdb, each on a fresh data dir under
// opts.Dir: one publisher with one event in flight, one publisher with 64,
// and opts.Conns publishers with opts.Window each.
func RunIngest(ctx context.Context, opts IngestOptions) (*IngestReport, error) {
	o := opts.withDefaults()
	root, err := os.MkdirTemp(o.Dir, "agentnode-bench-ingest-")
	if err != nil {
		return nil, fmt.Errorf("bench dir: %w", err)
	}
	defer os.RemoveAll(root)
	rep := &IngestReport{Machine: describeMachine(o.Dir, o.Dir), Options: o}
	rep.Options.Progress = nil
	scenarios := []IngestScenario{
		{Name: "1 publisher, 1 in flight", Conns: 1, Window: 1},
		{Name: "1 publisher, 64 in flight", Conns: 1, Window: 64},
		{Name: fmt.Sprintf("%d publishers, %d in flight each", o.Conns, o.Window), Conns: o.Conns, Window: o.Window},
	}
	progress(o.Progress, "signing %d lessons", len(scenarios)*o.Events)
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed>>1|1))
	evts, err := genIngestLessons(ctx, rng, o.Seed, len(scenarios)*o.Events)
	if err != nil {
		return nil, err
	}
	rep.SigCPU = sigCheckCPU(evts[:min(len(evts), 2000)])
	for i, sc := range scenarios {
		batch := evts[i*o.Events : (i+1)*o.Events]
		for _, op := range openers {
			progress(o.Progress, "ingest %s: %s", op.name, sc.Name)
			dir := filepath.Join(root, fmt.Sprintf("s%d-%s", i, op.name))
			run, err := ingestScenario(ctx, op, dir, batch, sc.Conns, sc.Window)
			if err != nil {
				return nil, fmt.Errorf("ingest %s, %s: %w", op.name, sc.Name, err)
			}
			if run.OK < run.Sent {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s, %s: %d of %d not OK; first: %s", op.name, sc.Name, run.Sent-run.OK, run.Sent, run.FirstError))
			}
			sc.Runs = append(sc.Runs, run)
		}
		for _, t := range o.Targets {
			progress(o.Progress, "ingest %s: %s", t.Name, sc.Name)
			run, err := ingestTarget(ctx, t, batch, sc.Conns, sc.Window)
			if err != nil {
				return nil, fmt.Errorf("ingest %s, %s: %w", t.Name, sc.Name, err)
			}
			if run.OK < run.Sent {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s, %s: %d of %d not OK; first: %s", t.Name, sc.Name, run.Sent-run.OK, run.Sent, run.FirstError))
			}
			sc.Runs = append(sc.Runs, run)
		}
		rep.Scenarios = append(rep.Scenarios, sc)
	}
	return rep, nil
}

// ingestScenario serves o on dir and publishes evts, measuring the
// process's CPU time and peak RSS around the run.
func ingestScenario(ctx context.Context, o opener, dir string, evts []*nostr.Event, conns, window int) (run IngestRun, err error) {
	s, err := serve(ctx, o, dir)
	if err != nil {
		return run, err
	}
	defer closeServer(s, &err)
	runtime.GC()
	resetPeakRSS()
	cpu0 := cpuTime()
	lat, errs, elapsed, err := publishMany(ctx, s.URL, evts, conns, window)
	cpu := cpuTime() - cpu0
	peak, _ := peakRSS()
	f := ingestFigures(window, elapsed, lat, errs)
	run = IngestRun{Relay: o.name, Sent: f.Sent, OK: f.OK, Seconds: f.Seconds, EventsPerSecond: f.EventsPerSecond,
		P50Ms: f.P50Ms, P99Ms: f.P99Ms, PeakRSSMiB: mib(peak), FirstError: f.FirstError}
	if f.OK > 0 {
		run.CPUPer1000 = cpu.Seconds() * 1000 / float64(f.OK)
	}
	return run, err
}

// ingestTarget publishes evts to a running relay, measuring its CPU time
// (when its pid is known; its peak RSS is not measured).
func ingestTarget(ctx context.Context, t Target, evts []*nostr.Event, conns, window int) (IngestRun, error) {
	c0, ok0 := t.cpu()
	lat, errs, elapsed, err := publishMany(ctx, t.URL, evts, conns, window)
	c1, ok1 := t.cpu()
	f := ingestFigures(window, elapsed, lat, errs)
	run := IngestRun{Relay: t.Name, Sent: f.Sent, OK: f.OK, Seconds: f.Seconds, EventsPerSecond: f.EventsPerSecond,
		P50Ms: f.P50Ms, P99Ms: f.P99Ms, FirstError: f.FirstError}
	if ok0 && ok1 && f.OK > 0 {
		run.CPUPer1000 = (c1 - c0).Seconds() * 1000 / float64(f.OK)
	}
	return run, err
}

// sigCheckCPU is the CPU seconds per 1,000 events of the id and BIP-340
// checks alone, on one goroutine.
func sigCheckCPU(evts []*nostr.Event) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := cpuTime()
	for _, e := range evts {
		e.CheckID()
		e.CheckSignature()
	}
	return (cpuTime() - cpu0).Seconds() * 1000 / float64(max(len(evts), 1))
}

// progress reports the start of a step.
func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "bench: "+format+"\n", args...)
	}
}

// WriteTable prints the setup and one block of rows per scenario.
func (r *IngestReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "machine:   %s/%s, %d CPUs, %s\n", m.GOOS, m.GOARCH, m.NumCPU, m.GoVersion)
	fmt.Fprintf(&b, "versions:  %s\n", versionList(m))
	fmt.Fprintf(&b, "data dirs: %s on %s; every OK'd event durable (fsync'd) before its OK\n", m.Dir, m.DirFS)
	fmt.Fprintf(&b, "workload:  %d signed kind-4129 lessons per scenario and relay; CPU and peak RSS are the whole process (relay + bench client)\n", r.Options.Events)
	fmt.Fprintf(&b, "id + BIP-340 check alone: %.3f CPU s per 1,000 events\n\n", r.SigCPU)
	for i, sc := range r.Scenarios {
		if len(sc.Runs) < 2 {
			continue
		}
		a, k := sc.Runs[0], sc.Runs[1]
		cells := func(get func(IngestRun) string) []string {
			var out []string
			for _, run := range sc.Runs[2:] {
				out = append(out, get(run))
			}
			return out
		}
		if i == 0 {
			ingestLine(&b, "metric", NameAgentnode, NameKhatru, "ratio", cells(func(run IngestRun) string { return run.Relay }))
		}
		fmt.Fprintf(&b, "%s:\n", sc.Name)
		eps := func(run IngestRun) string { return fmt.Sprintf("%.0f", run.EventsPerSecond) }
		lat := func(run IngestRun) string { return fmt.Sprintf("%.2f/%.2f", run.P50Ms, run.P99Ms) }
		cpu := func(run IngestRun) string { return fmt.Sprintf("%.3f", run.CPUPer1000) }
		rss := func(run IngestRun) string { return fmt.Sprintf("%.1f", run.PeakRSSMiB) }
		ingestLine(&b, "  events/s (OK true)", eps(a), eps(k), ratio(a.EventsPerSecond, k.EventsPerSecond), cells(eps))
		ingestLine(&b, "  OK latency p50/p99 (ms)", lat(a), lat(k), ratio(a.P50Ms, k.P50Ms)+"/"+ratio(a.P99Ms, k.P99Ms), cells(lat))
		ingestLine(&b, "  CPU s per 1,000 events", cpu(a), cpu(k), ratio(a.CPUPer1000, k.CPUPer1000), cells(cpu))
		ingestLine(&b, "  peak RSS (MiB)", rss(a), rss(k), ratio(a.PeakRSSMiB, k.PeakRSSMiB), cells(rss))
	}
	if len(r.Options.Targets) > 0 {
		fmt.Fprintf(&b, "\n(targets: CPU is the target process alone, read from /proc when its pid was given, 0 otherwise; peak RSS not measured)\n")
	}
	writeNotes(&b, r.Notes)
	_, err := io.WriteString(w, b.String())
	return err
}

// ingestLine prints one row: the two in-process relays, the targets, the ratio.
func ingestLine(b *strings.Builder, m, x, y, z string, more []string) {
	fmt.Fprintf(b, "%-34s %14s %14s", m, x, y)
	for _, c := range more {
		fmt.Fprintf(b, " %14s", c)
	}
	fmt.Fprintf(b, "  %s\n", z)
}

// versionList names the module versions in a fixed order.
func versionList(m Machine) string {
	var parts []string
	for _, path := range versionedModules {
		if v, ok := m.Versions[path]; ok {
			parts = append(parts, path[strings.LastIndex(path, "/")+1:]+" "+v)
		}
	}
	return strings.Join(parts, ", ")
}

// writeNotes appends a notes section.
func writeNotes(b *strings.Builder, notes []string) {
	if len(notes) == 0 {
		return
	}
	b.WriteString("\nnotes:\n")
	for _, n := range notes {
		fmt.Fprintf(b, "  - %s\n", n)
	}
}
