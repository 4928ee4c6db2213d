package crdt

import (
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The editing traces are CC BY 4.0, from the josephg/editing-traces
// collection (attribution: testdata/editing-traces/README.md).
const traceDir = "testdata/editing-traces"

type trace struct {
	StartContent string `json:"startContent"`
	EndContent   string `json:"endContent"`
	Txns         []struct {
		Parents []int   `json:"parents"`
		Agent   int     `json:"agent"`
		Patches []patch `json:"patches"`
	} `json:"txns"`
}

// patch is [position, deleteCount, insertText], positions in runes.
type patch struct {
	Pos, Del int
	Ins      string
}

func (p *patch) UnmarshalJSON(b []byte) error {
	var raw [3]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for i, dst := range []any{&p.Pos, &p.Del, &p.Ins} {
		if err := json.Unmarshal(raw[i], dst); err != nil {
			return fmt.Errorf("patch field %d: %w", i, err)
		}
	}
	return nil
}

var (
	traceMu    sync.Mutex
	traceCache = map[string]*trace{}
)

// loadTrace reads and decodes a gzipped trace once per test binary.
func loadTrace(tb testing.TB, name string) *trace {
	tb.Helper()
	traceMu.Lock()
	defer traceMu.Unlock()
	if tr, ok := traceCache[name]; ok {
		return tr
	}
	tr := readTrace(tb, name)
	traceCache[name] = tr
	return tr
}

// readTrace reads and decodes a gzipped trace.
func readTrace(tb testing.TB, name string) *trace {
	tb.Helper()
	f, err := os.Open(filepath.Join(traceDir, name))
	if err != nil {
		tb.Fatalf("open trace: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatalf("gunzip trace: %v", err)
	}
	tr := new(trace)
	if err := json.NewDecoder(zr).Decode(tr); err != nil {
		tb.Fatalf("decode trace: %v", err)
	}
	return tr
}

// patches flattens a sequential trace.
func (tr *trace) patches() []patch {
	var out []patch
	for _, tx := range tr.Txns {
		out = append(out, tx.Patches...)
	}
	return out
}

// replay applies patches as local edits and returns the ops.
func replay(doc *RGAText, ps []patch, keep bool) []Op {
	var ops []Op
	if keep {
		ops = make([]Op, 0, len(ps)+1)
	}
	for _, p := range ps {
		if p.Del > 0 {
			o := doc.Delete(p.Pos, p.Del)
			if keep {
				ops = append(ops, o...)
			}
		}
		if p.Ins != "" {
			o := doc.Insert(p.Pos, p.Ins)
			if keep {
				ops = append(ops, o...)
			}
		}
	}
	return ops
}

// compact encodes patches as uvarint(pos) uvarint(del) uvarint(len(ins))
// ins: ~1 MB for the automerge-paper trace, so a benchmark's heap holds
// little besides the document.
func compact(ps []patch) []byte {
	var b []byte
	for _, p := range ps {
		b = binary.AppendUvarint(b, uint64(p.Pos))
		b = binary.AppendUvarint(b, uint64(p.Del))
		b = binary.AppendUvarint(b, uint64(len(p.Ins)))
		b = append(b, p.Ins...)
	}
	return b
}

// replayCompact applies compact patches as local edits, discarding the ops.
func replayCompact(doc *RGAText, b []byte) {
	for len(b) > 0 {
		pos, n := binary.Uvarint(b)
		b = b[n:]
		del, n := binary.Uvarint(b)
		b = b[n:]
		l, n := binary.Uvarint(b)
		b = b[n:]
		if del > 0 {
			doc.Delete(int(pos), int(del))
		}
		if l > 0 {
			doc.Insert(int(pos), string(b[:l]))
		}
		b = b[l:]
	}
}
