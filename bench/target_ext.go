package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// Target is a relay already running somewhere (agentnode serve, strfry,
// plain khatru, ...), measured over its websocket URL beside the
// in-process relays. With a PID (a process on this machine), its CPU time
// is read from /proc/<pid>/stat around each measurement.
type Target struct {
	Name string // as it appears in the report
	URL  string // ws://host:port
	PID  int    // 0: CPU not measured
}

// cpu is the target's user + system CPU time so far (ok false without a PID).
func (t Target) cpu() (time.Duration, bool) {
	if t.PID <= 0 {
		return 0, false
	}
	return procCPU(t.PID)
}

// procCPU reads utime + stime of a process from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	rest := s[strings.LastIndexByte(s, ')')+2:] // fields from 3 (state) on
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	st, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, false
	}
	const clockTicks = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / clockTicks, true
}

// cpuMeter reads a CPU clock: the bench's own process for an in-process
// relay, the target's process for a target with a PID.
type cpuMeter func() (time.Duration, bool)

func selfCPU() (time.Duration, bool) { return cpuTime(), true }

// perThousand is the CPU seconds per 1,000 operations between two readings.
func perThousand(meter cpuMeter, run func() int) (cpuPer1000 float64, err error) {
	c0, ok0 := meter()
	n := run()
	c1, ok1 := meter()
	if !ok0 || !ok1 || n == 0 {
		return 0, nil
	}
	return (c1 - c0).Seconds() * 1000 / float64(n), nil
}

// loadOverWS stores evts in a running relay over conns websockets with 32
// in flight each (a target has no in-process Load).
func loadOverWS(ctx context.Context, url string, evts []*nostr.Event) LoadFigures {
	start := time.Now()
	_, errs, _, err := publishMany(ctx, url, evts, 8, 32)
	f := LoadFigures{Events: len(evts), How: "EVENT over 8 websockets x 32 in flight", Seconds: time.Since(start).Seconds()}
	for _, e := range errs {
		if e != nil {
			f.Refused++
			if f.FirstError == "" {
				f.FirstError = e.Error()
			}
		}
	}
	if err != nil && f.FirstError == "" {
		f.FirstError = err.Error()
	}
	return f
}

// ParallelFigures are queries run over several websockets at once, each
// websocket sending its next REQ when the last one's EOSE arrived.
type ParallelFigures struct {
	Conns      int     `json:"conns"`
	Queries    int     `json:"queries"`
	PerSecond  float64 `json:"queries_per_second"`
	CPUPer1000 float64 `json:"cpu_seconds_per_1000,omitempty"` // 0: not measured
}

// parallelQueries runs filters over conns websockets to url and reports
// the queries answered per second.
func parallelQueries(ctx context.Context, url string, filters []nostr.Filter, conns int, meter cpuMeter) (ParallelFigures, error) {
	wss, err := dialAll(ctx, url, conns)
	if err != nil {
		return ParallelFigures{}, err
	}
	defer closeAll(wss)
	errs := make([]error, conns)
	var elapsed time.Duration
	f := ParallelFigures{Conns: conns, Queries: len(filters)}
	f.CPUPer1000, _ = perThousand(meter, func() int {
		start := time.Now()
		var wg sync.WaitGroup
		for c, ws := range wss {
			var mine []nostr.Filter
			for i := c; i < len(filters); i += conns {
				mine = append(mine, filters[i])
			}
			wg.Go(func() { _, _, errs[c] = timeQueries(ctx, ws, "p"+strconv.Itoa(c)+"-", mine) })
		}
		wg.Wait()
		elapsed = time.Since(start)
		return len(filters)
	})
	for _, e := range errs {
		if e != nil {
			return f, fmt.Errorf("parallel queries: %w", e)
		}
	}
	f.PerSecond = float64(len(filters)) / elapsed.Seconds()
	return f, nil
}

// ServeStandalone serves one of the bench's in-process relays (NameKhatru
// for plain khatru + eventstore/lmdb, NameAgentnode for the relay package
// with the bench's limits) on addr with its data in dir, until ctx ends:
// so that a relay can be measured in serve form, from another process, as
// a --target. ready, when set, receives the listening URL.
func ServeStandalone(ctx context.Context, name, addr, dir string, ready func(url string)) error {
	var o *opener
	for i := range openers {
		if openers[i].name == name {
			o = &openers[i]
		}
	}
	if o == nil {
		return fmt.Errorf("bench: no relay called %q (want %s or %s)", name, NameKhatru, NameAgentnode)
	}
	rut, err := o.open(ctx, dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return errors.Join(fmt.Errorf("listen: %w", err), rut.Close(ctx))
	}
	s := &server{relay: rut, URL: "ws://" + ln.Addr().String(), done: make(chan error, 1),
		hs: &http.Server{Handler: rut, ReadHeaderTimeout: 10 * time.Second}}
	go func() { s.done <- s.hs.Serve(ln) }()
	if ready != nil {
		ready(s.URL)
	}
	<-ctx.Done()
	closeServer(s, &err)
	return err
}
