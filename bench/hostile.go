package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// Defaults of RunHostile.
const (
	DefaultHostileEvents      = 3000
	DefaultHostileSlowReaders = 10
	DefaultHostileStored      = 100_000
	DefaultHostileCounts      = 1000
	DefaultHostileReqs        = 10_000
)

// HostileOptions configure RunHostile. Zero fields take the defaults.
type HostileOptions struct {
	Events      int    // events published one at a time per phase of the slow-reader figure
	SlowReaders int    // subscribers that never read
	Stored      int    // events in the store for the flood figure
	Counts      int    // pipelined COUNT {} of the flood
	Reqs        int    // pipelined REQ limit 500 of the flood
	Dir         string // parent of the data dirs; default os.TempDir()

	Progress io.Writer
}

func (o HostileOptions) withDefaults() HostileOptions {
	orDefault(&o.Events, DefaultHostileEvents)
	orDefault(&o.SlowReaders, DefaultHostileSlowReaders)
	orDefault(&o.Stored, DefaultHostileStored)
	orDefault(&o.Counts, DefaultHostileCounts)
	orDefault(&o.Reqs, DefaultHostileReqs)
	o.Dir, o.Progress = orTempDir(o.Dir), orDiscard(o.Progress)
	return o
}

// HostileReport holds the agentnode relay's figures under hostile clients
// (docs/RELAY.md, "Facing the open network"). The relay runs in-process,
// so the RSS figures include the bench's own clients (a few MB).
type HostileReport struct {
	Machine Machine        `json:"machine"`
	Options HostileOptions `json:"options"`

	QuietP50Ms    float64 `json:"quiet_publish_p50_ms"` // EVENT->OK, no slow reader
	QuietP99Ms    float64 `json:"quiet_publish_p99_ms"`
	SlowP50Ms     float64 `json:"slow_publish_p50_ms"` // EVENT->OK while the slow readers hold subscriptions
	SlowP99Ms     float64 `json:"slow_publish_p99_ms"`
	SlowCutOff    int64   `json:"slow_readers_cut_off"`    // slow consumers the relay disconnected
	RSSBeforeMiB  float64 `json:"flood_rss_before_mib"`    // with the store loaded, before the flood
	RSSPeakMiB    float64 `json:"flood_rss_peak_mib"`      // sampled every 50 ms during and 2 s after
	RSSAfterMiB   float64 `json:"flood_rss_after_mib"`     // 2 s after the flooding client closed
	HealthMissed  int     `json:"flood_healthz_missed"`    // /healthz checks (every 100 ms) that failed
	FloodMessages int     `json:"flood_messages_accepted"` // messages the relay read before cutting the client off
}

// RunHostile measures the agentnode relay (in-process, real sockets) under
// the two attacks of the hostile-clients issue: publishers' OK latency
// with and without never-reading subscribers, and memory under pipelined
// COUNT/REQ floods on a loaded store.
func RunHostile(ctx context.Context, opts HostileOptions) (*HostileReport, error) {
	opts = opts.withDefaults()
	rep := &HostileReport{Machine: describeMachine(opts.Dir, opts.Dir), Options: opts}
	rep.Options.Progress = nil
	if err := hostileSlowReaders(ctx, opts, rep); err != nil {
		return nil, fmt.Errorf("slow readers: %w", err)
	}
	if err := hostileFlood(ctx, opts, rep); err != nil {
		return nil, fmt.Errorf("flood: %w", err)
	}
	return rep, nil
}

// withHostileRelay serves the agentnode relay on a fresh data directory
// under opts.Dir for the length of fn, then closes and removes both.
func withHostileRelay(ctx context.Context, opts HostileOptions, label string, fn func(*server) error) error {
	return withFreshRelay(ctx, opts.Dir, "hostile-"+label, fn)
}

func hostileSlowReaders(ctx context.Context, opts HostileOptions, rep *HostileReport) error {
	return withHostileRelay(ctx, opts, "slow", func(s *server) error { return slowReaders(ctx, s, opts, rep) })
}

func slowReaders(ctx context.Context, s *server, opts HostileOptions, rep *HostileReport) error {
	content := strings.Repeat("x", 4096)
	sign := func(label string) ([]*nostr.Event, error) {
		sk := nostr.GeneratePrivateKey()
		evts := make([]*nostr.Event, opts.Events)
		for i := range evts {
			evts[i] = &nostr.Event{Kind: 1, Content: fmt.Sprint(label, i, content), CreatedAt: nostr.Now()}
			if err := evts[i].Sign(sk); err != nil {
				return nil, err
			}
		}
		return evts, nil
	}
	quiet, err := sign("quiet")
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Progress, "publishing %d events with no slow reader\n", opts.Events)
	lat, errs, _, err := publishMany(ctx, s.URL, quiet, 1, 1)
	if err := errors.Join(append(errs, err)...); err != nil {
		return err
	}
	rep.QuietP50Ms, rep.QuietP99Ms = percentile(lat, 0.5), percentile(lat, 0.99)

	readers, err := openSlowReaders(ctx, s.URL, opts.SlowReaders)
	defer func() {
		for _, r := range readers {
			r.Close()
		}
	}()
	if err != nil {
		return err
	}
	slow, err := sign("slow")
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Progress, "publishing %d events while %d subscribers never read\n", opts.Events, opts.SlowReaders)
	lat, errs, _, err = publishMany(ctx, s.URL, slow, 1, 1)
	if err := errors.Join(append(errs, err)...); err != nil {
		return err
	}
	rep.SlowP50Ms, rep.SlowP99Ms = percentile(lat, 0.5), percentile(lat, 0.99)
	rep.SlowCutOff = s.relay.(agentnodeRelay).Stats().SlowConsumers
	return nil
}

// openSlowReaders subscribes n websockets with 4 KiB receive buffers to
// every new event; after EOSE they never read again.
func openSlowReaders(ctx context.Context, url string, n int) ([]*websocket.Conn, error) {
	var out []*websocket.Conn
	for i := range n {
		c, err := dialSmallBuffer(ctx, url)
		if err != nil {
			return out, err
		}
		out = append(out, c)
		id := fmt.Sprint("slow", i)
		if err := c.WriteMessage(websocket.TextMessage, []byte(`["REQ","`+id+`",{"limit":0}]`)); err != nil {
			return out, err
		}
		if _, err := (&wsConn{c}).readUntilEOSE(id); err != nil {
			return out, err
		}
	}
	return out, nil
}

// dialSmallBuffer connects with a 4 KiB receive buffer, set before the
// handshake so that the TCP window is small from the start.
func dialSmallBuffer(ctx context.Context, url string) (*websocket.Conn, error) {
	d := websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nd := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		}}
		return nd.DialContext(ctx, network, addr)
	}}
	c, _, err := d.DialContext(ctx, url, nil)
	return c, err
}

func hostileFlood(ctx context.Context, opts HostileOptions, rep *HostileReport) error {
	return withHostileRelay(ctx, opts, "flood", func(s *server) error { return flood(ctx, s, opts, rep) })
}

func flood(ctx context.Context, s *server, opts HostileOptions, rep *HostileReport) error {
	fmt.Fprintf(opts.Progress, "loading %d events\n", opts.Stored)
	if err := loadSmallEvents(ctx, s.relay, opts.Stored); err != nil {
		return err
	}
	before, err := readRSS()
	if err != nil {
		return err
	}
	rep.RSSBeforeMiB = mib(before)
	w := startWatch(strings.Replace(s.URL, "ws://", "http://", 1) + "/healthz")
	fmt.Fprintf(opts.Progress, "flooding: %d COUNT {} and %d REQ limit 500 pipelined on one connection that never reads\n", opts.Counts, opts.Reqs)
	rep.FloodMessages, err = floodPipelined(ctx, s.URL, opts.Counts, opts.Reqs)
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	after, err := readRSS()
	peak, missed := w.stop()
	rep.RSSPeakMiB, rep.RSSAfterMiB, rep.HealthMissed = mib(max(peak, after)), mib(after), missed
	return err
}

// loadSmallEvents stores n small signed kind-1 events in-process.
func loadSmallEvents(ctx context.Context, r relayUnderTest, n int) error {
	sk := nostr.GeneratePrivateKey()
	start := nostr.Now() - nostr.Timestamp(n)
	for i := range n {
		evt := &nostr.Event{Kind: 1, Content: fmt.Sprint("stored event ", i), CreatedAt: start + nostr.Timestamp(i), Tags: nostr.Tags{{"t", "bench"}}}
		if err := evt.Sign(sk); err != nil {
			return err
		}
		if err := r.Load(ctx, evt); err != nil {
			return err
		}
	}
	return nil
}

// floodPipelined writes counts COUNT {} then reqs REQ limit 500 on one
// connection that never reads, until the relay stops taking them (it cut
// the client off) or all are sent, then holds the connection for
// floodHold; it returns how many were written.
func floodPipelined(ctx context.Context, url string, counts, reqs int) (int, error) {
	c, err := dialSmallBuffer(ctx, url)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetWriteDeadline(time.Now().Add(60 * time.Second))
	sent := 0
	for i := range counts + reqs {
		msg := fmt.Appendf(nil, `["COUNT","c%d",{}]`, i)
		if i >= counts {
			msg = fmt.Appendf(nil, `["REQ","r%d",{"limit":500}]`, i)
		}
		if c.WriteMessage(websocket.TextMessage, msg) != nil {
			break
		}
		sent++
	}
	// The relay works through what it read while the client holds the
	// connection open (closing it cancels the remaining queries).
	time.Sleep(floodHold)
	return sent, nil
}

// floodHold is how long the flooding client stays connected after writing.
const floodHold = 10 * time.Second

// watch samples this process's RSS every 50 ms and GETs a health URL every
// 100 ms until stopped.
type watch struct {
	peak   atomic.Int64
	missed atomic.Int32
	done   chan struct{}
	wg     sync.WaitGroup
}

func startWatch(healthURL string) *watch {
	w := &watch{done: make(chan struct{})}
	hc := http.Client{Timeout: 2 * time.Second}
	w.wg.Add(2)
	go func() {
		defer w.wg.Done()
		for w.sleep(50 * time.Millisecond) {
			if rss, err := readRSS(); err == nil && rss > w.peak.Load() {
				w.peak.Store(rss)
			}
		}
	}()
	go func() {
		defer w.wg.Done()
		for w.sleep(100 * time.Millisecond) {
			resp, err := hc.Get(healthURL)
			if err != nil || resp.StatusCode != http.StatusOK {
				w.missed.Add(1)
			}
			if err == nil {
				resp.Body.Close()
			}
		}
	}()
	return w
}

func (w *watch) sleep(d time.Duration) bool {
	select {
	case <-w.done:
		return false
	case <-time.After(d):
		return true
	}
}

func (w *watch) stop() (peak int64, missed int) {
	close(w.done)
	w.wg.Wait()
	return w.peak.Load(), int(w.missed.Load())
}

// WriteTable prints the figures.
func (r *HostileReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	m, o := r.Machine, r.Options
	fmt.Fprintf(&b, "machine:   %s/%s, %d CPUs, %s; data dir on %s\n", m.GOOS, m.GOARCH, m.NumCPU, m.GoVersion, m.DirFS)
	fmt.Fprintf(&b, "agentnode relay in-process, real loopback websockets\n\n")
	fmt.Fprintf(&b, "publish EVENT->OK (ms), %d events of 4 KiB one at a time:\n", o.Events)
	fmt.Fprintf(&b, "  no slow reader                 p50 %6.2f   p99 %6.2f\n", r.QuietP50Ms, r.QuietP99Ms)
	fmt.Fprintf(&b, "  %2d subscribers never reading   p50 %6.2f   p99 %6.2f   (p99 ratio %.2f; %d cut off as slow consumers)\n\n",
		o.SlowReaders, r.SlowP50Ms, r.SlowP99Ms, r.SlowP99Ms/max(r.QuietP99Ms, 1e-9), r.SlowCutOff)
	fmt.Fprintf(&b, "flood: %d COUNT {} + %d REQ limit 500 pipelined on one never-reading connection, %d events stored:\n", o.Counts, o.Reqs, o.Stored)
	fmt.Fprintf(&b, "  messages the relay read        %d\n", r.FloodMessages)
	fmt.Fprintf(&b, "  RSS before / peak (10 s held + 2 s) / after (MiB) %.0f / %.0f / %.0f\n", r.RSSBeforeMiB, r.RSSPeakMiB, r.RSSAfterMiB)
	fmt.Fprintf(&b, "  /healthz checks missed         %d\n", r.HealthMissed)
	_, err := io.WriteString(w, b.String())
	return err
}
