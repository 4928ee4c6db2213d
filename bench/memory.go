package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// MemoryFigures are one relay's memory, measured in this process after a
// GC that returns freed memory to the OS.
type MemoryFigures struct {
	BaseRSSMiB         float64 `json:"base_rss_mib"`          // process before the relay was opened
	IdleRSSMiB         float64 `json:"idle_rss_mib"`          // process with the relay open and idle
	IdleDeltaMiB       float64 `json:"idle_delta_mib"`        // IdleRSS - BaseRSS
	Conns              int     `json:"conns"`                 // websocket connections held open
	Subs               int     `json:"subs"`                  // live subscriptions opened over them
	RSSPer1000SubsMiB  float64 `json:"rss_per_1000_subs_mib"` // RSS growth from opening the subs, per 1,000
	HeapPer1000SubsMiB float64 `json:"heap_per_1000_subs_mib"`
}

// memSample is the process's RSS and live Go heap at one moment.
type memSample struct {
	rss  int64 // bytes, VmRSS
	heap int64 // bytes, HeapAlloc right after a GC
}

// sampleMemory collects garbage, returns freed memory to the OS and reads
// VmRSS and the live heap.
func sampleMemory() (memSample, error) {
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, err := readRSS()
	return memSample{rss: rss, heap: int64(ms.HeapAlloc)}, err
}

// readRSS reads VmRSS from /proc/self/status, in bytes.
func readRSS() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("read RSS: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("read RSS: no VmRSS in /proc/self/status")
}

// measureMemory opens o on dir, samples memory idle, opens conns
// websockets, samples, opens subs subscriptions spread over them, samples.
func measureMemory(ctx context.Context, o opener, dir string, rng *rand.Rand, subs, conns int) (f MemoryFigures, err error) {
	base, err := sampleMemory()
	if err != nil {
		return f, err
	}
	s, err := serve(ctx, o, dir)
	if err != nil {
		return f, err
	}
	defer closeServer(s, &err)
	idle, err := sampleMemory()
	if err != nil {
		return f, err
	}
	f = MemoryFigures{BaseRSSMiB: mib(base.rss), IdleRSSMiB: mib(idle.rss), IdleDeltaMiB: mib(idle.rss - base.rss), Conns: conns, Subs: subs}
	return f, measureSubs(ctx, s.URL, rng, &f)
}

// measureSubs holds f.Conns websockets open and measures what f.Subs
// subscriptions over them add.
func measureSubs(ctx context.Context, url string, rng *rand.Rand, f *MemoryFigures) (err error) {
	wss, err := dialAll(ctx, url, f.Conns)
	defer func() { err = errors.Join(err, closeAll(wss)) }()
	if err != nil {
		return err
	}
	before, err := sampleMemory()
	if err != nil {
		return err
	}
	if err := subscribeAll(wss, rng, f.Subs); err != nil {
		return err
	}
	after, err := sampleMemory()
	per := 1000 / float64(f.Subs)
	f.RSSPer1000SubsMiB = mib(after.rss-before.rss) * per
	f.HeapPer1000SubsMiB = mib(after.heap-before.heap) * per
	return err
}

// dialAll opens n websockets to url; on error it returns those it opened.
func dialAll(ctx context.Context, url string, n int) ([]*wsConn, error) {
	wss := make([]*wsConn, 0, n)
	for range n {
		ws, err := dial(ctx, url)
		if err != nil {
			return wss, err
		}
		wss = append(wss, ws)
	}
	return wss, nil
}

// closeAll closes every websocket.
func closeAll(wss []*wsConn) error {
	var errs []error
	for _, ws := range wss {
		errs = append(errs, ws.close())
	}
	return errors.Join(errs...)
}

// subscribeAll opens n live subscriptions round-robin over wss, each
// {kinds:[4129], #e:[random id], limit:0}, and waits for every EOSE.
func subscribeAll(wss []*wsConn, rng *rand.Rand, n int) error {
	g := &generator{rng: rng}
	sent := make([]int, len(wss))
	for i := range n {
		c := i % len(wss)
		f := nostr.Filter{Kinds: []int{kindLesson}, Tags: nostr.TagMap{"e": {g.randomID()}}, LimitZero: true}
		if err := wss[c].req("s"+strconv.Itoa(i), f); err != nil {
			return fmt.Errorf("send REQ: %w", err)
		}
		sent[c]++
	}
	for c, ws := range wss {
		if err := ws.countEOSE(sent[c]); err != nil {
			return err
		}
	}
	return nil
}
