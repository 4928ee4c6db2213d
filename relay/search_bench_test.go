package relay

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// benchWords is the vocabulary of the generated lessons (as bench/).
var benchWords = strings.Fields(`python rust golang sql kubernetes docker testing
	security review refactor frontend backend database latency cache deploy
	monitoring logging parser compiler translation summary research finance legal
	medical design writing planning scheduling email support billing search index
	graph vector embedding prompt agent`)

// benchLessons are n unsigned kind-4129 lessons shaped like bench's.
func benchLessons(n int) []*nostr.Event {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string { return benchWords[rng.IntN(len(benchWords))] }
	out := make([]*nostr.Event, n)
	for i := range out {
		var b strings.Builder
		for b.Len() < 200 {
			fmt.Fprintf(&b, "When the task involves %s, prefer %s over %s and check %s first. ", word(), word(), word(), word())
		}
		out[i] = &nostr.Event{ID: fmt.Sprintf("%064x", rng.Uint64()), PubKey: fmt.Sprintf("%064x", rng.IntN(50)),
			Kind: 4129, CreatedAt: nostr.Timestamp(1_760_000_000 + i),
			Tags:    nostr.Tags{{"title", "Lesson about " + word() + " " + word() + " " + word()}, {"category", word()}},
			Content: strings.TrimSpace(b.String()[:200])}
	}
	return out
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSearchIndexLessons indexes b.N lessons (queued as the writer
// does, flushed at the end) and reports the process CPU per event,
// background analysis, persister and merger included.
func BenchmarkSearchIndexLessons(b *testing.B) {
	evts := benchLessons(b.N)
	x, _, err := openSearchIndex(b.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for _, evt := range evts {
		x.index(evt)
	}
	if err := x.flush(b.Context()); err != nil {
		b.Fatal(err)
	}
	if err := x.close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/event")
}
