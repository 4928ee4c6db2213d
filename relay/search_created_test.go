package relay

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/blugelabs/bluge"
	"github.com/nbd-wtf/go-nostr"
)

// TestCreatedRange_MatchesEveryIndexedForm indexes documents with bluge's
// own numeric field (step 4, as indexes written before step 8 hold them)
// and with createdField (step 8), and requires createdRange to return
// exactly the documents whose created_at lies in the range, each scored
// as bluge's NumericRangeQuery scores it.
func TestCreatedRange_MatchesEveryIndexedForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	stamps := []nostr.Timestamp{0, 1, 255, 256, 65535, 65536, 1<<32 - 1, 1_700_000_000, 1_700_000_001, 1_700_000_255, 1_700_000_256}
	for range 300 {
		stamps = append(stamps, nostr.Timestamp(1_699_990_000+rng.IntN(20_000)))
	}
	w, err := bluge.OpenWriter(bluge.InMemoryOnlyConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	batch := bluge.NewBatch()
	for i, ts := range stamps {
		doc := bluge.NewDocument(strconv.Itoa(i))
		if i%2 == 0 {
			doc.AddField(bluge.NewNumericField(fieldCreated, float64(ts)))
		} else {
			doc.AddField(createdField(ts))
		}
		batch.Update(doc.ID(), doc)
	}
	if err := w.Batch(batch); err != nil {
		t.Fatal(err)
	}
	r, err := w.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	ranges := [][2]nostr.Timestamp{{0, 1 << 40}, {1_700_000_000, 1_700_000_000}, {1_700_000_000, 1_700_000_256},
		{1_700_000_001, 1_700_000_255}, {256, 65535}, {5, 4}, {1 << 32, 1 << 33}, {-100, 300}, {-1 << 40, 1_700_000_000}, {-5, -1}, {1_700_000_000, 1 << 62}}
	for range 200 {
		lo := nostr.Timestamp(1_699_990_000 + rng.IntN(20_000))
		ranges = append(ranges, [2]nostr.Timestamp{lo, lo + nostr.Timestamp(rng.IntN(5_000))})
	}
	for _, lh := range ranges {
		got := searchScores(t, r, createdRange{lo: float64(lh[0]), hi: float64(lh[1])})
		var want []string
		for i, ts := range stamps {
			if lh[0] <= ts && ts <= lh[1] {
				want = append(want, strconv.Itoa(i))
			}
		}
		if ids := slices.Sorted(maps.Keys(got)); !slices.Equal(ids, sortedStrings(want)) {
			t.Fatalf("range %v: got %d docs, want %d", lh, len(ids), len(want))
		}
		old := searchScores(t, r, bluge.NewNumericRangeInclusiveQuery(float64(lh[0]), float64(lh[1]), true, true).SetField(fieldCreated))
		for id, score := range got {
			if n, _ := strconv.Atoi(id); n%2 == 0 && old[id] != score {
				t.Fatalf("range %v, doc %s: score %v, bluge's numeric range %v", lh, id, score, old[id])
			}
			if score != 1 {
				t.Fatalf("range %v, doc %s: score %v, want the constant 1", lh, id, score)
			}
		}
	}
}

// searchScores runs q and returns every match's id and score.
func searchScores(t *testing.T, r *bluge.Reader, q bluge.Query) map[string]float64 {
	t.Helper()
	dmi, err := r.Search(t.Context(), bluge.NewTopNSearch(10_000, q))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	next, err := dmi.Next()
	for err == nil && next != nil {
		score := next.Score
		next.VisitStoredFields(func(field string, value []byte) bool {
			if field == "_id" {
				out[string(value)] = score
			}
			return true
		})
		next, err = dmi.Next()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sortedStrings(s []string) []string { return slices.Sorted(slices.Values(s)) }
