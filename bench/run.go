package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"github.com/nbd-wtf/go-nostr"
)

// RunRelay measures agentnode's relay and plain khatru+lmdb side by side:
// memory first (while the process is small), then durable ingest on the
// real disk, then queries over a large store. Temporary data directories
// are removed before it returns.
func RunRelay(ctx context.Context, opts RelayOptions) (*RelayReport, error) {
	o := opts.withDefaults()
	r, err := newRun(o)
	if err != nil {
		return nil, err
	}
	defer r.cleanup()
	phases := []struct {
		name string
		run  func(context.Context) error
	}{{PhaseMemory, r.memoryPhase}, {PhaseIngest, r.ingestPhase}, {PhaseQuery, r.queryPhase}}
	for _, phase := range phases {
		if !o.runs(phase.name) {
			continue
		}
		if err := phase.run(ctx); err != nil {
			return nil, err
		}
	}
	return r.report, nil
}

// Phases of RunRelay (RelayOptions.Phases).
const (
	PhaseMemory = "memory"
	PhaseIngest = "ingest"
	PhaseQuery  = "query"
)

// runs reports whether phase is selected.
func (o RelayOptions) runs(phase string) bool {
	return len(o.Phases) == 0 || slices.Contains(o.Phases, phase)
}

// run is one RunRelay: its options, randomness, directories and report.
type run struct {
	opts   RelayOptions
	rng    *rand.Rand
	root   string // under opts.Dir
	qroot  string // under opts.QueryDir
	report *RelayReport
}

// newRun creates the temporary directories and an empty report.
func newRun(o RelayOptions) (*run, error) {
	root, err := os.MkdirTemp(o.Dir, "agentnode-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench dir: %w", err)
	}
	qroot, err := os.MkdirTemp(o.QueryDir, "agentnode-bench-query-")
	if err != nil {
		os.RemoveAll(root)
		return nil, fmt.Errorf("bench query dir: %w", err)
	}
	rep := &RelayReport{
		Machine: describeMachine(o.Dir, o.QueryDir),
		Options: ReportOptions{Events: o.Events, Window: o.Window, Stored: o.Stored, Defs: o.Defs,
			Queries: o.Queries, Subs: o.Subs, Conns: o.Conns, Seed: o.Seed, Phases: o.Phases},
	}
	for _, op := range openers {
		rep.Relays = append(rep.Relays, &RelayFigures{Name: op.name})
	}
	for _, t := range o.Targets {
		rep.Relays = append(rep.Relays, &RelayFigures{Name: t.Name, Target: t.URL})
	}
	return &run{opts: o, rng: rand.New(rand.NewPCG(o.Seed, o.Seed>>1|1)), root: root, qroot: qroot, report: rep}, nil
}

// cleanup removes the temporary directories.
func (r *run) cleanup() {
	os.RemoveAll(r.root)
	os.RemoveAll(r.qroot)
}

// dir is a fresh data directory name for phase and relay under parent.
func (r *run) dir(parent, phase string, o opener) string {
	return filepath.Join(parent, phase+"-"+o.name)
}

// progress reports the start of a step.
func (r *run) progress(format string, args ...any) {
	if r.opts.Progress != nil {
		fmt.Fprintf(r.opts.Progress, "bench: "+format+"\n", args...)
	}
}

// memoryPhase measures each relay's idle RSS and subscription cost, after
// one unmeasured round that pays the process's one-time costs for both.
func (r *run) memoryPhase(ctx context.Context) error {
	warm := min(r.opts.Subs, 100)
	for _, o := range openers {
		r.progress("memory warm-up, %s", o.name)
		if _, err := measureMemory(ctx, o, r.dir(r.root, "memory-warmup", o), r.rng, warm, r.opts.Conns); err != nil {
			return fmt.Errorf("memory warm-up %s: %w", o.name, err)
		}
	}
	for _, o := range openers {
		r.progress("memory, %s: %d subscriptions", o.name, r.opts.Subs)
		f, err := measureMemory(ctx, o, r.dir(r.root, "memory", o), r.rng, r.opts.Subs, r.opts.Conns)
		if err != nil {
			return fmt.Errorf("memory %s: %w", o.name, err)
		}
		r.report.relay(o.name).Memory = f
	}
	return nil
}

// ingestPhase sends fresh signed lessons to a fresh store of each relay,
// first with the window, then one at a time.
func (r *run) ingestPhase(ctx context.Context) error {
	r.progress("signing %d lessons", 2*r.opts.Events)
	lessons, err := genIngestLessons(ctx, r.rng, r.opts.Seed, 2*r.opts.Events)
	if err != nil {
		return err
	}
	windowed, serial := lessons[:r.opts.Events], lessons[r.opts.Events:]
	for _, o := range openers {
		if r.report.relay(o.name).Ingest, err = r.ingestRun(ctx, o, windowed, r.opts.Window); err != nil {
			return err
		}
	}
	for _, o := range openers {
		if r.report.relay(o.name).IngestSerial, err = r.ingestRun(ctx, o, serial, 1); err != nil {
			return err
		}
	}
	return nil
}

// ingestRun serves o on a fresh directory and ingests evts with window.
func (r *run) ingestRun(ctx context.Context, o opener, evts []*nostr.Event, window int) (f IngestFigures, err error) {
	r.progress("ingest, %s: %d lessons, window %d", o.name, len(evts), window)
	s, err := serve(ctx, o, r.dir(r.root, fmt.Sprintf("ingest-w%d", window), o))
	if err != nil {
		return f, err
	}
	defer closeServer(s, &err)
	f, err = ingest(ctx, s.URL, evts, window)
	if f.OK < f.Sent {
		r.report.notef("ingest %s window %d: %d of %d events not OK; first: %s", o.name, window, f.Sent-f.OK, f.Sent, f.FirstError)
	}
	return f, err
}

// queryPhase loads the same generated store into each relay in-process,
// then times the queries, the same sequence for both.
func (r *run) queryPhase(ctx context.Context) error {
	r.progress("signing %d stored events", r.opts.Stored)
	ds, err := genDataset(ctx, r.rng, r.opts.Seed, r.opts.Stored, r.opts.Defs)
	if err != nil {
		return err
	}
	qs := querySet{
		lessonsWarm: lessonsOfDefFilters(r.rng, ds.defs, warmupQueries),
		lessons:     lessonsOfDefFilters(r.rng, ds.defs, r.opts.Queries),
		searchWarm:  searchDefFilters(r.rng, warmupQueries),
		search:      searchDefFilters(r.rng, r.opts.Queries),
		parallel:    lessonsOfDefFilters(r.rng, ds.defs, parallelShare*r.opts.Queries),
	}
	ids := map[string][][]string{}
	for _, o := range openers {
		if ids[o.name], err = r.queryRelay(ctx, o, ds, qs); err != nil {
			return fmt.Errorf("queries %s: %w", o.name, err)
		}
	}
	same := sameResults(ids[NameAgentnode], ids[NameKhatru])
	r.report.notef("lessons-of-def: %d of %d queries returned the same events on both relays", same, r.opts.Queries)
	for _, t := range r.opts.Targets {
		tids, err := r.queryTarget(ctx, t, ds, qs)
		if err != nil {
			return fmt.Errorf("queries %s (%s): %w", t.Name, t.URL, err)
		}
		r.report.notef("lessons-of-def: %d of %d queries returned the same events on %s as on %s", sameResults(ids[NameAgentnode], tids), r.opts.Queries, t.Name, NameAgentnode)
	}
	return nil
}

// parallelShare is how many times Queries the parallel run sends.
const parallelShare = 4

// parallelConns is the websockets of the parallel query run.
const parallelConns = 8

// queryTarget loads ds into a running relay over websockets and runs qs
// (no search: a target need not speak NIP-50).
func (r *run) queryTarget(ctx context.Context, t Target, ds *dataset, qs querySet) ([][]string, error) {
	fig := r.report.relay(t.Name)
	r.progress("loading %d events into %s over websockets", len(ds.events), t.Name)
	fig.Load = loadOverWS(ctx, t.URL, ds.events)
	r.noteLoad(t.Name, fig.Load)
	r.progress("queries, %s", t.Name)
	return r.timeLessons(ctx, fig, t.URL, t.cpu, qs)
}

// timeLessons runs the lessons-of-def queries on one websocket, then over
// parallelConns, with the CPU meter around each.
func (r *run) timeLessons(ctx context.Context, fig *RelayFigures, url string, meter cpuMeter, qs querySet) ([][]string, error) {
	var lessons queryRun
	var err error
	fig.LessonsCPUPer1000, _ = perThousand(meter, func() int {
		lessons, err = runQueries(ctx, url, "{kinds:[4129], #e:[defID], limit:100}", qs.lessonsWarm, qs.lessons)
		return len(qs.lessons)
	})
	if err != nil {
		return nil, err
	}
	fig.LessonsOfDef = lessons.figures
	if fig.LessonsParallel, err = parallelQueries(ctx, url, qs.parallel, parallelConns, meter); err != nil {
		return nil, err
	}
	return lessons.ids, nil
}

// querySet is the query phase's filters, shared by both relays.
type querySet struct {
	lessonsWarm, lessons, searchWarm, search, parallel []nostr.Filter
}

// queryRelay serves o on a fresh query directory, loads ds and runs qs;
// it returns the event ids each lessons-of-def query returned.
func (r *run) queryRelay(ctx context.Context, o opener, ds *dataset, qs querySet) (ids [][]string, err error) {
	s, err := serve(ctx, o, r.dir(r.qroot, "query", o))
	if err != nil {
		return nil, err
	}
	defer closeServer(s, &err)
	fig := r.report.relay(o.name)
	r.progress("loading %d events into %s in-process", len(ds.events), o.name)
	fig.Load = load(ctx, s.relay, ds.events, o.loads)
	r.noteLoad(o.name, fig.Load)
	r.progress("queries, %s", o.name)
	ids, err = r.timeLessons(ctx, fig, s.URL, selfCPU, qs)
	if err != nil {
		return nil, err
	}
	if o.search {
		search, err := runQueries(ctx, s.URL, `{kinds:[4199], search:"<word>", limit:20}`, qs.searchWarm, qs.search)
		if err != nil {
			return nil, err
		}
		fig.SearchDefs = &search.figures
	}
	return ids, nil
}

// noteLoad records the load's duration and any refusals.
func (r *run) noteLoad(name string, f LoadFigures) {
	r.report.notef("query-phase load, %s: %d events in %.1f s (%.0f ev/s) via %s", name, f.Events, f.Seconds, float64(f.Events)/f.Seconds, f.How)
	if f.Refused > 0 {
		r.report.notef("query-phase load, %s: %d events refused; first: %s", name, f.Refused, f.FirstError)
	}
}
