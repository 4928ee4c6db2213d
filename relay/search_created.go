package relay

import (
	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/analysis"
	"github.com/blugelabs/bluge/numeric"
	"github.com/blugelabs/bluge/search"
	"github.com/blugelabs/bluge/search/searcher"
	"github.com/blugelabs/bluge/search/similarity"
	"github.com/nbd-wtf/go-nostr"
)

// createdShifts are the shifts at which the created_at field holds its
// prefix-coded terms. bluge's NumericField holds 16 (shifts 0, 4, …, 60,
// plus doc values) and its range searcher hard-codes that step. Nostr
// timestamps are whole seconds below 2^32, so as float64 bits (bluge's
// encoding) their low 21 bits are zero: the terms at shifts 4 to 20 each
// hold a single second, the same documents as the shift-0 term. The field
// keeps shift 0 and bluge's shifts from 24 on (11 terms: measured, the 16
// numeric terms were ≈35 of the ≈97 µs of CPU a lesson costs the index).
// These shifts are a subset of bluge's, so documents indexed with
// NumericField before answer createdRange's queries: no rebuild.
var createdShifts = []uint{0, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60}

// createdField is the created_at field of an index document: indexed
// only (no doc values: nothing sorts or aggregates on it).
func createdField(ts nostr.Timestamp) *bluge.TermField {
	v := numeric.MustNewPrefixCodedInt64(numeric.Float64ToInt64(float64(ts)), 0)
	f := bluge.NewKeywordFieldBytes(fieldCreated, v).WithAnalyzer(createdAnalyzer{})
	f.FieldOptions = bluge.Index
	return f
}

// createdAnalyzer turns a prefix-coded value (shift 0) into its terms at
// createdShifts, as bluge's numeric analyzer does at every fourth shift.
type createdAnalyzer struct{}

func (createdAnalyzer) Analyze(input []byte) analysis.TokenStream {
	tokens := make([]analysis.Token, 1, len(createdShifts))
	tokens[0] = analysis.Token{End: len(input), Term: input, PositionIncr: 1, Type: analysis.Numeric}
	if v, err := numeric.PrefixCoded(input).Int64(); err == nil {
		buf := make([]byte, 8*len(createdShifts)) // every shifted term, one allocation
		for _, shift := range createdShifts[1:] {
			var term numeric.PrefixCoded
			term, buf, _ = numeric.NewPrefixCodedInt64Prealloc(v, shift, buf)
			tokens = append(tokens, analysis.Token{End: len(term), Term: term, Type: analysis.Numeric})
		}
	}
	stream := make(analysis.TokenStream, len(tokens))
	for i := range tokens {
		stream[i] = &tokens[i]
	}
	return stream
}

// createdRange is an inclusive created_at range query over the terms at
// createdShifts.
// Like bluge's NumericRangeQuery it scores a match with a constant 1 (a
// value lies in exactly one of the disjoint prefix ranges), so ranking is
// unchanged.
type createdRange struct{ lo, hi float64 }

var _ bluge.Query = createdRange{}

func (q createdRange) Searcher(r search.Reader, opts search.SearcherOptions) (search.Searcher, error) {
	dict, err := r.DictionaryLookup(fieldCreated)
	if err != nil {
		return nil, err
	}
	defer dict.Close()
	var terms [][]byte
	for _, tr := range splitRange(numeric.Float64ToInt64(q.lo), numeric.Float64ToInt64(q.hi), createdShifts) {
		if terms, err = tr.appendIndexed(terms, r, dict); err != nil {
			return nil, err
		}
	}
	return searcher.NewMultiTermSearcherBytes(r, terms, fieldCreated, 1,
		similarity.ConstantScorer(1), similarity.NewCompositeSumScorer(), opts, true)
}

// termRange is the prefix values from lo to hi at shift, inclusive.
type termRange struct {
	lo, hi int64
	shift  uint
}

// maxProbes bounds the values of a range that are looked up one by one
// (as bluge's searcher does); a wider range (the shift-0 ones span 2^24
// encodings, a few seconds) is read by walking the dictionary, which
// visits only the terms present.
const maxProbes = 64

// termLookup is the part of bluge's dictionary lookup the probes use.
type termLookup interface {
	Contains(term []byte) (bool, error)
}

// appendIndexed appends the created_at terms of t that the index holds.
func (t termRange) appendIndexed(terms [][]byte, r search.Reader, dict termLookup) ([][]byte, error) {
	if t.hi >= t.lo && uint64(t.hi-t.lo) < maxProbes {
		for i := range t.hi - t.lo + 1 {
			term := numeric.MustNewPrefixCodedInt64((t.lo+i)<<t.shift, t.shift)
			if found, err := dict.Contains(term); err == nil && found {
				terms = append(terms, term)
			}
		}
		return terms, nil
	}
	end := numeric.MustNewPrefixCodedInt64(t.hi<<t.shift, t.shift)
	it, err := r.DictionaryIterator(fieldCreated, nil, numeric.MustNewPrefixCodedInt64(t.lo<<t.shift, t.shift), append(end, 0))
	if err != nil {
		return nil, err
	}
	entry, err := it.Next()
	for ; err == nil && entry != nil; entry, err = it.Next() {
		terms = append(terms, []byte(entry.Term()))
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return terms, err
}

// splitRange splits [lo, hi] into disjoint prefix ranges at the given
// shifts, finest first (bluge search/searcher splitInt64Range, Apache-2.0,
// with a list of shifts for its fixed step).
func splitRange(lo, hi int64, shifts []uint) []termRange {
	var out []termRange
	if lo > hi {
		return out
	}
	for i, shift := range shifts {
		if i == len(shifts)-1 {
			return append(out, newTermRange(lo, hi, shift))
		}
		step := shifts[i+1] - shift
		diff := int64(1) << (shift + step)
		mask := ((int64(1) << step) - 1) << shift
		hasLower, hasUpper := lo&mask != 0, hi&mask != mask
		nextLo, nextHi := lo&^mask, hi&^mask
		if hasLower {
			nextLo = (lo + diff) &^ mask
		}
		if hasUpper {
			nextHi = (hi - diff) &^ mask
		}
		if nextLo > nextHi || nextLo < lo || nextHi > hi {
			return append(out, newTermRange(lo, hi, shift))
		}
		if hasLower {
			out = append(out, newTermRange(lo, lo|mask, shift))
		}
		if hasUpper {
			out = append(out, newTermRange(hi&^mask, hi, shift))
		}
		lo, hi = nextLo, nextHi
	}
	return out
}

// newTermRange is [lo, hi] at shift (their bits below shift are ignored;
// the arithmetic shift keeps the order of negative values).
func newTermRange(lo, hi int64, shift uint) termRange {
	return termRange{lo: lo >> shift, hi: hi >> shift, shift: shift}
}

// createdBounds is filter's time bounds as a range query, or nil.
func createdBounds(filter nostr.Filter) bluge.Query {
	if filter.Since == nil && filter.Until == nil {
		return nil
	}
	lo, hi := 0.0, float64(1<<62)
	if filter.Since != nil {
		lo = float64(*filter.Since)
	}
	if filter.Until != nil {
		hi = float64(*filter.Until)
	}
	return createdRange{lo: lo, hi: hi}
}
