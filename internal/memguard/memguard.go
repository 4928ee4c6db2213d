package memguard

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// Shedding thresholds, as fractions of the ceiling, and how often the
// runtime's figures are read.
const (
	ShedFraction   = 0.80
	ResumeFraction = 0.70
	SampleInterval = 100 * time.Millisecond
	// CollectInterval: above ResumeFraction a sample forces a garbage
	// collection at most this often, so that the live heap it reads is
	// current even when nothing allocates.
	CollectInterval = time.Second
)

// Guard says when the process is too near its memory ceiling to take new
// work. A nil *Guard is never busy. Its methods are safe for concurrent
// use.
type Guard struct {
	ceiling int64
	inUse   func() int64     // bytes counted against the ceiling
	now     func() time.Time // clock of the sampling interval
	collect func()           // a garbage collection (runtime.GC)

	busy atomic.Bool
	next atomic.Int64 // unix nanoseconds of the next sample
	mu   sync.Mutex   // one sampler at a time
	last atomic.Int64 // the last sample

	nextCollect int64 // unix nanoseconds; under mu
}

// New is a guard with the given ceiling in bytes; nil when ceiling <= 0
// (no ceiling: never busy).
func New(ceiling int64) *Guard {
	if ceiling <= 0 {
		return nil
	}
	return &Guard{ceiling: ceiling, inUse: RuntimeInUse, now: time.Now, collect: runtime.GC}
}

// Ceiling is the guard's ceiling in bytes (0 for a nil guard).
func (g *Guard) Ceiling() int64 {
	if g == nil {
		return 0
	}
	return g.ceiling
}

// InUse is the last sampled figure (0 for a nil guard).
func (g *Guard) InUse() int64 {
	if g == nil {
		return 0
	}
	return g.last.Load()
}

// Busy reports whether new work should be refused: the figure passed
// ShedFraction of the ceiling and has not yet fallen below
// ResumeFraction.
func (g *Guard) Busy() bool {
	if g == nil {
		return false
	}
	if now := g.now().UnixNano(); now >= g.next.Load() {
		g.sample(now)
	}
	return g.busy.Load()
}

// sample reads the figure once per SampleInterval and updates busy.
func (g *Guard) sample(now int64) {
	if !g.mu.TryLock() {
		return // another caller is sampling
	}
	defer g.mu.Unlock()
	if now < g.next.Load() {
		return
	}
	g.next.Store(now + int64(SampleInterval))
	used := g.inUse()
	if float64(used) >= ResumeFraction*float64(g.ceiling) && now >= g.nextCollect {
		// The figure is the live heap of the last collection: while the
		// node sheds work nothing may allocate enough to start the next
		// one, and the memory freed meanwhile would never be seen.
		g.nextCollect = now + int64(CollectInterval)
		g.collect()
		used = g.inUse()
	}
	g.last.Store(used)
	switch {
	case float64(used) >= ShedFraction*float64(g.ceiling):
		g.busy.Store(true)
	case float64(used) < ResumeFraction*float64(g.ceiling):
		g.busy.Store(false)
	}
}

// runtimeMetrics are the figures RuntimeInUse adds up.
var runtimeMetrics = []string{"/gc/heap/live:bytes", "/memory/classes/heap/stacks:bytes"}

// RuntimeInUse is the live heap as of the last garbage collection plus
// the goroutine stacks: what the process holds and cannot give back,
// garbage not counted (the collector frees it; the runtime's soft limit
// makes it do so before the ceiling).
func RuntimeInUse() int64 {
	s := make([]metrics.Sample, len(runtimeMetrics))
	for i, name := range runtimeMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	var total int64
	for _, m := range s {
		if m.Value.Kind() == metrics.KindUint64 {
			total += int64(m.Value.Uint64())
		}
	}
	return total
}

// SetProcessLimit makes ceiling the Go runtime's soft memory limit
// (debug.SetMemoryLimit); ceiling <= 0 leaves the limit as it is.
func SetProcessLimit(ceiling int64) {
	if ceiling > 0 {
		debug.SetMemoryLimit(ceiling)
	}
}
