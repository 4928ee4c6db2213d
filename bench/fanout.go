package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// Defaults of RunFanout.
const (
	DefaultFanoutSubs   = 5000
	DefaultFanoutConns  = 50
	DefaultFanoutEvents = 20
)

// FanoutOptions configure RunFanout. Zero fields take the defaults.
type FanoutOptions struct {
	Subs   int    // live subscriptions that match every published event
	Conns  int    // websockets the subscriptions are spread over
	Events int    // events published, one at a time
	Dir    string // parent of the data dirs; default os.TempDir()
	// Targets are running relays measured beside the in-process ones.
	Targets []Target `json:"targets,omitempty"`

	Progress io.Writer `json:"-"`
}

func (o FanoutOptions) withDefaults() FanoutOptions {
	orDefault(&o.Subs, DefaultFanoutSubs)
	orDefault(&o.Conns, DefaultFanoutConns)
	orDefault(&o.Events, DefaultFanoutEvents)
	o.Conns = min(o.Conns, o.Subs)
	o.Dir = orTempDir(o.Dir)
	return o
}

// FanoutReport is what RunFanout measured.
type FanoutReport struct {
	Machine Machine         `json:"machine"`
	Options FanoutOptions   `json:"options"`
	Relays  []FanoutFigures `json:"relays"` // agentnode, then khatru+lmdb
}

// FanoutFigures are one relay's fan-out times: from writing the EVENT to
// the last subscription's copy arriving (durable store included).
type FanoutFigures struct {
	Relay  string  `json:"relay"`
	Events int     `json:"events"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// RunFanout opens opts.Subs live subscriptions on each relay and publishes
// opts.Events events one at a time, timing each until every subscription
// has received it.
func RunFanout(ctx context.Context, opts FanoutOptions) (*FanoutReport, error) {
	o := opts.withDefaults()
	root, err := os.MkdirTemp(o.Dir, "agentnode-bench-fanout-")
	if err != nil {
		return nil, fmt.Errorf("bench dir: %w", err)
	}
	defer os.RemoveAll(root)
	evts, err := fanoutEvents(o.Events)
	if err != nil {
		return nil, err
	}
	rep := &FanoutReport{Machine: describeMachine(o.Dir, o.Dir), Options: o}
	rep.Options.Progress = nil
	for _, op := range openers {
		progress(o.Progress, "fan-out %s: %d subscriptions over %d websockets, %d events", op.name, o.Subs, o.Conns, o.Events)
		f, err := fanoutRelay(ctx, op, filepath.Join(root, op.name), o, evts)
		if err != nil {
			return nil, fmt.Errorf("fan-out %s: %w", op.name, err)
		}
		rep.Relays = append(rep.Relays, f)
	}
	for _, t := range o.Targets {
		progress(o.Progress, "fan-out %s: %d subscriptions over %d websockets, %d events", t.Name, o.Subs, o.Conns, o.Events)
		f, err := fanoutURL(ctx, t.Name, t.URL, o, evts)
		if err != nil {
			return nil, fmt.Errorf("fan-out %s: %w", t.Name, err)
		}
		rep.Relays = append(rep.Relays, f)
	}
	return rep, nil
}

// fanoutEvents signs n kind-1 notes tagged t=fanout.
func fanoutEvents(n int) ([]*nostr.Event, error) {
	sk := nostr.GeneratePrivateKey()
	out := make([]*nostr.Event, n)
	for i := range out {
		e := &nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"t", "fanout"}}, Content: "fan-out " + strconv.Itoa(i)}
		if err := e.Sign(sk); err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// fanoutRelay serves o on dir, subscribes and times every event.
func fanoutRelay(ctx context.Context, o opener, dir string, opts FanoutOptions, evts []*nostr.Event) (f FanoutFigures, err error) {
	s, err := serve(ctx, o, dir)
	if err != nil {
		return f, err
	}
	defer closeServer(s, &err)
	return fanoutURL(ctx, o.name, s.URL, opts, evts)
}

// fanoutURL subscribes to the relay at url and times every event.
func fanoutURL(ctx context.Context, name, url string, opts FanoutOptions, evts []*nostr.Event) (f FanoutFigures, err error) {
	subs, err := openFanoutSubs(ctx, url, opts.Subs, opts.Conns)
	if err != nil {
		return f, err
	}
	defer subs.close()
	pub, err := dial(ctx, url)
	if err != nil {
		return f, err
	}
	defer pub.close()
	lat := make([]time.Duration, 0, len(evts))
	for _, e := range evts {
		d, err := subs.time(pub, e)
		if err != nil {
			return f, err
		}
		lat = append(lat, d)
	}
	return FanoutFigures{Relay: name, Events: len(lat), P50Ms: percentile(lat, 0.5), P99Ms: percentile(lat, 0.99), MaxMs: percentile(lat, 1)}, nil
}

// fanoutSubs are the subscribers' websockets; each counts EVENT frames.
type fanoutSubs struct {
	conns   []*wsConn
	perConn []int            // subscriptions on each connection
	arrived []chan time.Time // per connection: when its copies of the next event were all in
	wg      sync.WaitGroup
}

// openFanoutSubs opens subs live subscriptions round-robin over conns
// websockets and starts one reader per websocket.
func openFanoutSubs(ctx context.Context, url string, subs, conns int) (*fanoutSubs, error) {
	wss, err := dialAll(ctx, url, conns)
	fs := &fanoutSubs{conns: wss, perConn: make([]int, len(wss))}
	if err != nil {
		fs.close()
		return nil, err
	}
	filter := nostr.Filter{Kinds: []int{1}, Tags: nostr.TagMap{"t": {"fanout"}}, LimitZero: true}
	for i := range subs {
		c := i % len(wss)
		if err := wss[c].req("f"+strconv.Itoa(i), filter); err != nil {
			fs.close()
			return nil, err
		}
		fs.perConn[c]++
	}
	for c, ws := range wss {
		if err := ws.countEOSE(fs.perConn[c]); err != nil {
			fs.close()
			return nil, err
		}
	}
	for c, ws := range wss {
		ch := make(chan time.Time, 1)
		fs.arrived = append(fs.arrived, ch)
		fs.wg.Go(func() { countEvents(ws, fs.perConn[c], ch) })
	}
	return fs, nil
}

// countEvents reads EVENT frames and reports a time each time another
// perEvent of them have arrived, until the connection closes.
func countEvents(ws *wsConn, perEvent int, arrived chan<- time.Time) {
	defer close(arrived)
	for n := 0; ; {
		ws.c.SetReadDeadline(time.Now().Add(wsTimeout))
		_, msg, err := ws.c.ReadMessage()
		if err != nil {
			return
		}
		if bytes.HasPrefix(msg, prefixEvent) {
			if n++; n%perEvent == 0 {
				arrived <- time.Now()
			}
		}
	}
}

// errFanoutLost: a subscriber connection ended before an event reached it.
var errFanoutLost = errors.New("a subscriber connection closed before the event arrived")

// time publishes evt and waits for every connection's copies.
func (fs *fanoutSubs) time(pub *wsConn, evt *nostr.Event) (time.Duration, error) {
	frame, _ := nostr.EventEnvelope{Event: *evt}.MarshalJSON()
	start := time.Now()
	if err := pub.c.WriteMessage(websocket.TextMessage, frame); err != nil {
		return 0, err
	}
	last := start
	for _, ch := range fs.arrived {
		at, ok := <-ch
		if !ok {
			return 0, errFanoutLost
		}
		if at.After(last) {
			last = at
		}
	}
	if err := readOK(pub); err != nil {
		return 0, err
	}
	return last.Sub(start), nil
}

// readOK reads frames until an OK, which must be true.
func readOK(ws *wsConn) error {
	ws.c.SetReadDeadline(time.Now().Add(wsTimeout))
	for {
		_, msg, err := ws.c.ReadMessage()
		if err != nil {
			return err
		}
		if ok, isOK := parseMessage(msg).(*nostr.OKEnvelope); isOK {
			if !ok.OK {
				return fmt.Errorf("event refused: %s", ok.Reason)
			}
			return nil
		}
	}
}

// close closes every subscriber websocket and waits for the readers.
func (fs *fanoutSubs) close() {
	closeAll(fs.conns)
	fs.wg.Wait()
}

// WriteTable prints the setup and the fan-out times.
func (r *FanoutReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	m, o := r.Machine, r.Options
	fmt.Fprintf(&b, "machine:   %s/%s, %d CPUs, %s\n", m.GOOS, m.GOARCH, m.NumCPU, m.GoVersion)
	fmt.Fprintf(&b, "versions:  %s\n", versionList(m))
	fmt.Fprintf(&b, "fan-out:   %d live subscriptions over %d websockets, %d events one at a time, data dir on %s;\n", o.Subs, o.Conns, o.Events, m.DirFS)
	fmt.Fprintf(&b, "           time from EVENT written to the last subscription's copy read (durable store included)\n\n")
	if len(r.Relays) >= 2 {
		a, k := r.Relays[0], r.Relays[1]
		cells := func(get func(FanoutFigures) string) []string {
			var out []string
			for _, f := range r.Relays[2:] {
				out = append(out, get(f))
			}
			return out
		}
		pq := func(f FanoutFigures) string { return fmt.Sprintf("%.1f/%.1f", f.P50Ms, f.P99Ms) }
		mx := func(f FanoutFigures) string { return fmt.Sprintf("%.1f", f.MaxMs) }
		ingestLine(&b, "metric", NameAgentnode, NameKhatru, "ratio", cells(func(f FanoutFigures) string { return f.Relay }))
		ingestLine(&b, "fan-out p50/p99 (ms)", pq(a), pq(k), ratio(a.P50Ms, k.P50Ms)+"/"+ratio(a.P99Ms, k.P99Ms), cells(pq))
		ingestLine(&b, "fan-out max (ms)", mx(a), mx(k), ratio(a.MaxMs, k.MaxMs), cells(mx))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
