package crdt

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"
)

// BenchmarkRGAText_AutomergePaper replays the whole automerge-paper trace
// (259,778 edits) as local edits, ops generated and dropped, from a compact
// in-memory encoding of the patches, so the heap holds little else. After
// the timed runs it replays once more sampling runtime.MemStats every 2,000
// edits and reports:
//   - peak-heap-MB: the highest HeapAlloc seen, above the heap before the
//     replay: the document plus garbage (mostly returned ops) not collected
//     yet, which the GC lets grow to its goal (GOGC=100, 4 MB minimum);
//   - live-heap-MB: what the finished document retains after a GC.
func BenchmarkRGAText_AutomergePaper(b *testing.B) {
	edits := compact(readTrace(b, "automerge-paper.json.gz").patches())
	clock := NewHLC("alice", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		doc := NewRGAText()
		doc.Bind(clock)
		replayCompact(doc, edits)
	}
	b.StopTimer()
	peak, live := heapOfReplay(edits)
	b.ReportMetric(peak, "peak-heap-MB")
	b.ReportMetric(live, "live-heap-MB")
}

// heapOfReplay measures one replay's peak and retained heap in MB.
func heapOfReplay(edits []byte) (peak, live float64) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, top := ms.HeapAlloc, ms.HeapAlloc
	doc := NewRGAText()
	doc.Bind(NewHLC("alice", nil))
	for rest := edits; len(rest) > 0; {
		n := nextEdits(rest, 2000)
		replayCompact(doc, rest[:n])
		rest = rest[n:]
		runtime.ReadMemStats(&ms)
		top = max(top, ms.HeapAlloc)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	live = float64(ms.HeapAlloc-base) / (1 << 20)
	runtime.KeepAlive(doc)
	runtime.KeepAlive(edits)
	return float64(top-base) / (1 << 20), live
}

// nextEdits returns the byte length of the first k compact edits of b.
func nextEdits(b []byte, k int) int {
	off := 0
	for ; k > 0 && off < len(b); k-- {
		for range 2 {
			_, n := binary.Uvarint(b[off:])
			off += n
		}
		l, n := binary.Uvarint(b[off:])
		off += n + int(l)
	}
	return off
}

// BenchmarkRGAText_AutomergePaperRemote applies the trace's ops on a second
// replica in a random causal order (the shipping half of the trace test).
func BenchmarkRGAText_AutomergePaperRemote(b *testing.B) {
	ps := loadTrace(b, "automerge-paper.json.gz").patches()
	a := boundText("alice")
	ops := replay(a, ps, true)
	order := causalShuffle(rand.New(rand.NewPCG(7, 7)), ops, rgaDeps(ops))
	b.ReportAllocs()
	for b.Loop() {
		doc := NewRGAText()
		for _, i := range order {
			if err := doc.Apply(ops[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRGAText_InsertRandom is the per-op cost of a one-rune local
// insert at a random position in a text of ~100k runes.
func BenchmarkRGAText_InsertRandom(b *testing.B) {
	doc := boundText("alice")
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		doc.Insert(r.IntN(doc.Len()+1), "x")
	}
	b.ReportAllocs()
	for b.Loop() {
		doc.Insert(r.IntN(doc.Len()+1), "y")
	}
}

// BenchmarkRGAText_ApplyRemote is the per-op cost of applying a remote
// one-rune insert at a random position.
func BenchmarkRGAText_ApplyRemote(b *testing.B) {
	src := boundText("alice")
	r := rand.New(rand.NewPCG(1, 2))
	var ops []Op
	for range 200_000 {
		ops = append(ops, src.Insert(r.IntN(src.Len()+1), "x")...)
	}
	doc := NewRGAText()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if i == len(ops) {
			b.StopTimer()
			doc, i = NewRGAText(), 0
			b.StartTimer()
		}
		if err := doc.Apply(ops[i]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
