package bench

import (
	"io"
	"os"
	"time"
)

// Defaults of RunRelay for zero RelayOptions fields.
const (
	DefaultEvents  = 3000
	DefaultStored  = 100_000
	DefaultSubs    = 2000
	DefaultWindow  = 64
	DefaultQueries = 200
	DefaultConns   = 20
	DefaultDefs    = 100
)

// shmDir is where the query phase's stores go when it exists.
const shmDir = "/dev/shm"

// RelayOptions configure RunRelay. Zero fields take the defaults above.
type RelayOptions struct {
	Events   int    // lessons sent per ingest run (one run per relay and window)
	Window   int    // in-flight events in the windowed ingest run
	Stored   int    // events stored before the query phase
	Defs     int    // definitions among the stored events
	Queries  int    // queries of each kind per relay
	Subs     int    // live subscriptions opened per relay
	Conns    int    // websocket connections the subscriptions are spread over
	Dir      string // parent of the ingest and memory data dirs (real disk); default os.TempDir()
	QueryDir string // parent of the query-phase data dirs; default /dev/shm if present, else Dir
	Seed     uint64 // seed of the generated data and query choices
	// Targets are running relays measured beside the in-process ones
	// (query phase only).
	Targets []Target
	// Phases run, of "memory", "ingest" and "query"; empty means all.
	Phases []string

	// Progress, when set, receives one line per phase as it starts.
	Progress io.Writer
}

// withDefaults fills every zero field.
func (o RelayOptions) withDefaults() RelayOptions {
	orDefault(&o.Events, DefaultEvents)
	orDefault(&o.Window, DefaultWindow)
	orDefault(&o.Stored, DefaultStored)
	orDefault(&o.Defs, DefaultDefs)
	orDefault(&o.Queries, DefaultQueries)
	orDefault(&o.Subs, DefaultSubs)
	orDefault(&o.Conns, DefaultConns)
	o.Defs = min(o.Defs, o.Stored)
	o.Conns = min(o.Conns, o.Subs)
	o.Dir = orTempDir(o.Dir)
	if o.QueryDir == "" {
		o.QueryDir = defaultQueryDir(o.Dir)
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	return o
}

// defaultQueryDir is /dev/shm when it is a writable directory, else dir.
func defaultQueryDir(dir string) string {
	probe, err := os.MkdirTemp(shmDir, "agentnode-bench-probe-")
	if err != nil {
		return dir
	}
	os.Remove(probe)
	return shmDir
}
