package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// Defaults of RunCrowded: the read-path attacks of issue 21, at full size.
const (
	DefaultCrowdedEvents     = 2000
	DefaultCrowdedEventBytes = 450_000
	DefaultCrowdedDefs       = 2000
	DefaultCrowdedDefBytes   = 100_000
	DefaultCrowdedConns      = 8
)

// CrowdedOptions configure RunCrowded. Zero fields take the defaults.
type CrowdedOptions struct {
	Events     int    // events stored at one second
	EventBytes int    // size of each
	Defs       int    // definitions stored (kind 4199, all matching the search)
	DefBytes   int    // size of each
	Conns      int    // connections sending 4 COUNT {"search":"fill"} each
	Dir        string // parent of the data dirs; default os.TempDir()

	Progress io.Writer `json:"-"`
}

func (o CrowdedOptions) withDefaults() CrowdedOptions {
	orDefault(&o.Events, DefaultCrowdedEvents)
	orDefault(&o.EventBytes, DefaultCrowdedEventBytes)
	orDefault(&o.Defs, DefaultCrowdedDefs)
	orDefault(&o.DefBytes, DefaultCrowdedDefBytes)
	orDefault(&o.Conns, DefaultCrowdedConns)
	o.Dir, o.Progress = orTempDir(o.Dir), orDiscard(o.Progress)
	return o
}

// CrowdedReport holds the relay's memory under the two read-path attacks
// (docs/RELAY.md, "Bounded reads"). The relay runs in-process, so the
// figures include the bench's own clients; the peak is VmHWM, reset just
// before each attack.
type CrowdedReport struct {
	Machine Machine        `json:"machine"`
	Options CrowdedOptions `json:"options"`
	REQ     AttackFigures  `json:"crowded_second_req"`
	COUNT   AttackFigures  `json:"search_count"`
}

// AttackFigures are the process's memory around one attack.
type AttackFigures struct {
	RSSBeforeMiB float64 `json:"rss_before_mib"` // with the store loaded
	RSSPeakMiB   float64 `json:"rss_peak_mib"`   // VmHWM during the attack
	RSSAfterMiB  float64 `json:"rss_after_mib"`  // 5 s after the clients left
	Seconds      float64 `json:"seconds"`        // until every answer arrived
}

// RunCrowded stores Events events of EventBytes at one second and sends 4
// REQ {"kinds":[1],"until":T,"limit":1} on one connection; then, on a
// fresh store, Defs definitions of DefBytes and, from Conns connections,
// 4 COUNT {"search":"fill"} each.
func RunCrowded(ctx context.Context, opts CrowdedOptions) (*CrowdedReport, error) {
	opts = opts.withDefaults()
	rep := &CrowdedReport{Machine: describeMachine(opts.Dir, opts.Dir), Options: opts}
	err := withCrowdedRelay(ctx, opts, "req", func(s *server) error {
		return crowdedREQ(ctx, s, opts, &rep.REQ)
	})
	if err != nil {
		return nil, fmt.Errorf("crowded second: %w", err)
	}
	err = withCrowdedRelay(ctx, opts, "count", func(s *server) error {
		return searchCOUNT(ctx, s, opts, &rep.COUNT)
	})
	if err != nil {
		return nil, fmt.Errorf("search count: %w", err)
	}
	return rep, nil
}

func withCrowdedRelay(ctx context.Context, opts CrowdedOptions, label string, fn func(*server) error) error {
	return withFreshRelay(ctx, opts.Dir, "crowded-"+label, fn)
}

func crowdedREQ(ctx context.Context, s *server, opts CrowdedOptions, f *AttackFigures) error {
	at := nostr.Now() - 1000
	fmt.Fprintf(opts.Progress, "crowded: storing %d events of %d bytes at one second\n", opts.Events, opts.EventBytes)
	err := loadBulky(ctx, s.relay, opts.Events, func(i int) *nostr.Event {
		return &nostr.Event{Kind: 1, CreatedAt: at, Content: fmt.Sprint(i, " ", strings.Repeat("c", 60_000)),
			Tags: bulkyTags("x", (opts.EventBytes-60_000)/60_000, 60_000)}
	})
	if err != nil {
		return err
	}
	req := func(i int) string {
		return fmt.Sprintf(`["REQ","q%d",{"kinds":[1],"until":%d,"limit":1}]`, i, at)
	}
	return attack(ctx, s.URL, 1, 4, req, prefixEOSE, f)
}

func searchCOUNT(ctx context.Context, s *server, opts CrowdedOptions, f *AttackFigures) error {
	fmt.Fprintf(opts.Progress, "crowded: storing %d definitions of %d bytes\n", opts.Defs, opts.DefBytes)
	err := loadBulky(ctx, s.relay, opts.Defs, func(i int) *nostr.Event {
		// large in tags the search index does not hold: the figure is the reads', not the indexing's
		return &nostr.Event{Kind: 4199, CreatedAt: nostr.Now(), Content: fmt.Sprint("fill ", i),
			Tags: append(nostr.Tags{{"title", fmt.Sprint("fill ", i)}}, bulkyTags("instructions", opts.DefBytes/50_000, 50_000)...)}
	})
	if err != nil {
		return err
	}
	count := func(i int) string { return fmt.Sprintf(`["COUNT","n%d",{"search":"fill"}]`, i) }
	// one COUNT first: the search index commits what it has queued (the
	// indexing's memory is not the attack's)
	if err := attackOne(ctx, s.URL, 1, count, []byte(`["COUNT"`)); err != nil {
		return err
	}
	return attack(ctx, s.URL, opts.Conns, 4, count, []byte(`["COUNT"`), f)
}

// loadBulky signs and stores n events made by build, in-process.
func loadBulky(ctx context.Context, r relayUnderTest, n int, build func(i int) *nostr.Event) error {
	sk := nostr.GeneratePrivateKey()
	for i := range n {
		evt := build(i)
		if err := evt.Sign(sk); err != nil {
			return err
		}
		if err := r.Load(ctx, evt); err != nil {
			return fmt.Errorf("store event %d: %w", i, err)
		}
	}
	return nil
}

// bulkyTags is count tags named name, each with a value of size bytes.
func bulkyTags(name string, count, size int) nostr.Tags {
	tags := make(nostr.Tags, max(count, 0))
	for i := range tags {
		tags[i] = nostr.Tag{name, fmt.Sprint(i, strings.Repeat("v", max(size, 1)))}
	}
	return tags
}

// attack sends per messages made by msg on each of conns connections,
// waits for as many answers starting with done on each, closes them and
// records the memory around it.
func attack(ctx context.Context, url string, conns, per int, msg func(int) string, done []byte, f *AttackFigures) error {
	if err := resetPeakRSS(); err != nil {
		return err
	}
	before, err := readRSS()
	if err != nil {
		return err
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- attackOne(ctx, url, per, msg, done)
		}()
	}
	wg.Wait()
	close(errs)
	if err := errors.Join(collect(errs)...); err != nil {
		return err
	}
	f.Seconds = time.Since(start).Seconds()
	peak, err := peakRSS()
	if err != nil {
		return err
	}
	time.Sleep(5 * time.Second) // what the relay still holds once the clients left
	after, err := readRSS()
	f.RSSBeforeMiB, f.RSSPeakMiB, f.RSSAfterMiB = mib(before), mib(peak), mib(after)
	return err
}

func attackOne(ctx context.Context, url string, per int, msg func(int) string, done []byte) error {
	c, _, err := websocket.DefaultDialer.DialContext(ctx, url, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	for i := range per {
		if err := c.WriteMessage(websocket.TextMessage, []byte(msg(i))); err != nil {
			return err
		}
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Minute))
	for n := 0; n < per; {
		_, b, err := c.ReadMessage()
		if err != nil {
			return err
		}
		if bytes.HasPrefix(b, done) {
			n++
		}
	}
	return nil
}

func collect(errs chan error) []error {
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}

// WriteTable prints the figures.
func (r *CrowdedReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	m, o := r.Machine, r.Options
	fmt.Fprintf(&b, "machine:   %s/%s, %d CPUs, %s; data dir on %s\n", m.GOOS, m.GOARCH, m.NumCPU, m.GoVersion, m.DirFS)
	fmt.Fprintf(&b, "agentnode relay in-process, real loopback websockets; RSS in MiB (peak: VmHWM)\n\n")
	row := func(label string, f AttackFigures) {
		fmt.Fprintf(&b, "%-60s before %5.0f  peak %5.0f  after 5 s %5.0f  (%.1f s)\n", label, f.RSSBeforeMiB, f.RSSPeakMiB, f.RSSAfterMiB, f.Seconds)
	}
	row(fmt.Sprintf("%d x %d B at one second, 4 REQ limit 1 on 1 conn", o.Events, o.EventBytes), r.REQ)
	row(fmt.Sprintf("%d defs x %d B, %d conns x 4 COUNT search", o.Defs, o.DefBytes, o.Conns), r.COUNT)
	_, err := io.WriteString(w, b.String())
	return err
}
