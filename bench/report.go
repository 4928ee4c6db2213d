package bench

import (
	"fmt"
	"io"
	"strings"
)

// RelayReport is everything RunRelay measured.
type RelayReport struct {
	Machine Machine         `json:"machine"`
	Options ReportOptions   `json:"options"`
	Relays  []*RelayFigures `json:"relays"` // agentnode, then khatru+lmdb
	Notes   []string        `json:"notes"`  // checks and anomalies worth reading
}

// ReportOptions are the options the figures were taken with.
type ReportOptions struct {
	Events  int      `json:"events"`
	Window  int      `json:"window"`
	Stored  int      `json:"stored"`
	Defs    int      `json:"defs"`
	Queries int      `json:"queries"`
	Subs    int      `json:"subs"`
	Conns   int      `json:"conns"`
	Seed    uint64   `json:"seed"`
	Phases  []string `json:"phases,omitempty"` // empty: all
}

// RelayFigures are one relay's figures.
type RelayFigures struct {
	Name         string        `json:"name"`
	Ingest       IngestFigures `json:"ingest"`           // window Options.Window
	IngestSerial IngestFigures `json:"ingest_window1"`   // window 1
	Load         LoadFigures   `json:"load"`             // in-process load before the queries
	Target       string        `json:"target,omitempty"` // URL of a running relay; empty: in-process
	LessonsOfDef QueryFigures  `json:"lessons_of_def"`
	// LessonsCPUPer1000 is CPU s per 1,000 lessons-of-def queries on one
	// websocket: the whole bench process for in-process relays (client
	// included), the relay's process alone for a target with a PID; 0: not measured.
	LessonsCPUPer1000 float64         `json:"lessons_cpu_seconds_per_1000"`
	LessonsParallel   ParallelFigures `json:"lessons_parallel"`
	SearchDefs        *QueryFigures   `json:"search_defs"` // nil: the relay has no search
	Memory            MemoryFigures   `json:"memory"`
}

// LoadFigures are the in-process load of the query phase's store.
type LoadFigures struct {
	Events     int     `json:"events"`
	Refused    int     `json:"refused"`
	Seconds    float64 `json:"seconds"`
	How        string  `json:"how"`
	FirstError string  `json:"first_error,omitempty"`
}

// relay returns the figures of the relay called name.
func (r *RelayReport) relay(name string) *RelayFigures {
	for _, f := range r.Relays {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// notef adds a note.
func (r *RelayReport) notef(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// WriteTable prints the setup, the side-by-side table and the notes.
func (r *RelayReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	r.writeSetup(&b)
	b.WriteByte('\n')
	r.writeRows(&b)
	if len(r.Notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSetup prints the machine, the versions and the workload.
func (r *RelayReport) writeSetup(b *strings.Builder) {
	m, o := r.Machine, r.Options
	fmt.Fprintf(b, "machine:   %s/%s, %d CPUs, %s\n", m.GOOS, m.GOARCH, m.NumCPU, m.GoVersion)
	fmt.Fprintf(b, "versions:  %s\n", r.versions())
	fmt.Fprintf(b, "ingest:    %s on %s, every event fsync'd; %d lessons per run\n", m.Dir, m.DirFS, o.Events)
	fmt.Fprintf(b, "queries:   %s on %s (query figures do not depend on fsync); %d stored (%d definitions, lessons, comments), %d queries each after %d warm-up\n",
		m.QueryDir, m.QueryDirFS, o.Stored, o.Defs, o.Queries, warmupQueries)
	fmt.Fprintf(b, "memory:    %d subscriptions over %d websockets; relays measured one after the other, RSS after GC + FreeOSMemory\n", o.Subs, o.Conns)
}

// versions lists the module versions in a fixed order.
func (r *RelayReport) versions() string {
	var parts []string
	for _, path := range versionedModules {
		if v, ok := r.Machine.Versions[path]; ok {
			parts = append(parts, path[strings.LastIndex(path, "/")+1:]+" "+v)
		}
	}
	return strings.Join(parts, ", ")
}

// row is one table line: the metric and how to print and compare it.
type row struct {
	phase  string
	metric string
	cell   func(f *RelayFigures) string
	ratio  func(a, b *RelayFigures) string
}

// writeRows prints the table, agentnode against khatru+lmdb.
func (r *RelayReport) writeRows(b *strings.Builder) {
	a, k := r.relay(NameAgentnode), r.relay(NameKhatru)
	if a == nil || k == nil {
		b.WriteString("(incomplete report: a relay is missing)\n")
		return
	}
	targets := r.Relays[2:]
	line := func(m, x, y, z string, more []string) {
		fmt.Fprintf(b, "%-40s %14s %14s", m, x, y)
		for _, c := range more {
			fmt.Fprintf(b, " %14s", c)
		}
		fmt.Fprintf(b, "  %s\n", z)
	}
	var names []string
	for _, t := range targets {
		names = append(names, t.Name)
	}
	line("metric", NameAgentnode, NameKhatru, "ratio", names)
	sel := RelayOptions{Phases: r.Options.Phases}
	for _, rw := range r.rows() {
		if rw.phase != "" && !sel.runs(rw.phase) {
			continue
		}
		var more []string
		for _, t := range targets {
			if rw.phase == PhaseQuery {
				more = append(more, rw.cell(t))
			} else {
				more = append(more, "-")
			}
		}
		line(rw.metric, rw.cell(a), rw.cell(k), rw.ratio(a, k), more)
	}
}

// rows are the table's lines.
func (r *RelayReport) rows() []row {
	w := r.Options.Window
	rows := []row{
		single(fmt.Sprintf("ingest 4129, 1 ws, window %d (ev/s)", w), "%.0f", func(f *RelayFigures) float64 { return f.Ingest.EventsPerSecond }),
		single("ingest 4129, 1 ws, window 1 (ev/s)", "%.0f", func(f *RelayFigures) float64 { return f.IngestSerial.EventsPerSecond }),
		pair("OK latency window 1 p50/p99 (ms)", func(f *RelayFigures) (float64, float64) { return f.IngestSerial.P50Ms, f.IngestSerial.P99Ms }),
		pair(fmt.Sprintf("OK latency window %d p50/p99 (ms)", w), func(f *RelayFigures) (float64, float64) { return f.Ingest.P50Ms, f.Ingest.P99Ms }),
		pair("REQ->EOSE lessons-of-def p50/p99 ms", func(f *RelayFigures) (float64, float64) { return f.LessonsOfDef.P50Ms, f.LessonsOfDef.P99Ms }),
		single("CPU s per 1,000 lessons-of-def (1 ws)", "%.3f", func(f *RelayFigures) float64 { return f.LessonsCPUPer1000 }),
		single(fmt.Sprintf("lessons-of-def over %d ws (queries/s)", parallelConns), "%.0f", func(f *RelayFigures) float64 { return f.LessonsParallel.PerSecond }),
		single(fmt.Sprintf("CPU s per 1,000 queries (%d ws)", parallelConns), "%.3f", func(f *RelayFigures) float64 { return f.LessonsParallel.CPUPer1000 }),
		searchRow(),
		single("idle RSS over process base (MiB)", "%.1f", func(f *RelayFigures) float64 { return f.Memory.IdleDeltaMiB }),
		single("process RSS, relay idle (MiB)", "%.1f", func(f *RelayFigures) float64 { return f.Memory.IdleRSSMiB }),
		single("RSS per 1,000 subs (MiB)", "%.2f", func(f *RelayFigures) float64 { return f.Memory.RSSPer1000SubsMiB }),
		single("Go heap per 1,000 subs (MiB)", "%.2f", func(f *RelayFigures) float64 { return f.Memory.HeapPer1000SubsMiB }),
	}
	phases := []string{PhaseIngest, PhaseIngest, PhaseIngest, PhaseIngest, PhaseQuery, PhaseQuery, PhaseQuery, PhaseQuery, PhaseQuery, PhaseMemory, PhaseMemory, PhaseMemory, PhaseMemory}
	for i := range rows {
		rows[i].phase = phases[i]
	}
	return rows
}

// single is a row of one number per relay; the ratio is agentnode/khatru.
func single(metric, format string, get func(*RelayFigures) float64) row {
	return row{"", metric,
		func(f *RelayFigures) string { return fmt.Sprintf(format, get(f)) },
		func(a, b *RelayFigures) string { return ratio(get(a), get(b)) }}
}

// pair is a p50/p99 row; the ratio is given for each.
func pair(metric string, get func(*RelayFigures) (float64, float64)) row {
	return row{"", metric,
		func(f *RelayFigures) string { x, y := get(f); return fmt.Sprintf("%.2f/%.2f", x, y) },
		func(a, b *RelayFigures) string {
			a50, a99 := get(a)
			b50, b99 := get(b)
			return ratio(a50, b50) + "/" + ratio(a99, b99)
		}}
}

// searchRow prints n/a for a relay without search.
func searchRow() row {
	p := pair("REQ->EOSE search defs p50/p99 ms", func(f *RelayFigures) (float64, float64) {
		return f.SearchDefs.P50Ms, f.SearchDefs.P99Ms
	})
	cell, rat := p.cell, p.ratio
	p.cell = func(f *RelayFigures) string {
		if f.SearchDefs == nil {
			return "n/a"
		}
		return cell(f)
	}
	p.ratio = func(a, b *RelayFigures) string {
		if a.SearchDefs == nil || b.SearchDefs == nil {
			return "n/a"
		}
		return rat(a, b)
	}
	return p
}

// ratio is a/b with two decimals, or n/a when b is zero.
func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}
