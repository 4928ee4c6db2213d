package cap

import (
	"strconv"
	"strings"
)

// Range bounds: longer ranges, or ranges of more comparators, are not ranges
// (a describe naming one answers NOT_FOUND).
const (
	maxRangeBytes       = 256
	maxRangeComparators = 16
)

// Range is a version range as npm's semver writes it, the form CAP's open
// issue ("semantic versioning plus explicit compatibility declarations")
// points to: an exact version ("1.2.3"), a partial one ("1", "1.2", "1.x",
// "*"), caret ("^1.2.0": compatible, same major; same minor below 1.0.0),
// tilde ("~1.2.0": same minor), comparators (">=1.0.0 <2.0.0", "=1.2.3")
// and alternatives joined by "||". A pre-release matches only a range that
// names a pre-release of the same major.minor.patch (npm's rule), so "^1.0.0"
// never picks 2.0.0-rc.1 nor 1.5.0-beta.
type Range struct {
	sets [][]comparator // any set matches when all its comparators do
}

// comparator is one bound: op is one of "=", ">", ">=", "<", "<=".
type comparator struct {
	op string
	v  semver
}

// ParseRange parses r; ok is false when r is not a range.
func ParseRange(r string) (Range, bool) {
	if len(r) > maxRangeBytes || strings.TrimSpace(r) == "" {
		return Range{}, false
	}
	var out Range
	n := 0
	for _, alt := range strings.Split(r, "||") {
		set, ok := parseSet(alt)
		n += len(set)
		if !ok || n > maxRangeComparators {
			return Range{}, false
		}
		out.sets = append(out.sets, set)
	}
	return out, true
}

// parseSet parses space-separated comparators ("" or "*": any version).
func parseSet(s string) ([]comparator, bool) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, false
	}
	var set []comparator
	for _, f := range fields {
		cs, ok := parseComparator(f)
		if !ok {
			return nil, false
		}
		set = append(set, cs...)
	}
	return set, true
}

// parseComparator reads one term into its bounds.
func parseComparator(f string) ([]comparator, bool) {
	for _, op := range []string{">=", "<=", ">", "<", "="} {
		if rest, ok := strings.CutPrefix(f, op); ok {
			return bound(op, rest)
		}
	}
	switch f[0] {
	case '^':
		return caret(f[1:])
	case '~':
		return tilde(f[1:])
	}
	return partial(f)
}

// bound reads one comparator; a partial version is its span's edge
// (npm's reading): ">=1.2" is >=1.2.0, ">1.2" is >=1.3.0, "<2" is below
// every 2.x (2.0.0's pre-releases too), "<=1.2" below 1.3.0, "=1" the span.
func bound(op, v string) ([]comparator, bool) {
	if sv, ok := parseSemver(v); ok {
		return []comparator{{op, sv}}, true
	}
	nums, ok := parsePartial(v)
	if !ok || len(nums) == 0 {
		return nil, false
	}
	lo, up := partialEdges(nums)
	switch op {
	case ">=":
		return []comparator{{">=", lo}}, true
	case ">":
		return []comparator{{">=", up}}, true
	case "<":
		lo.pre = []string{"0"}
		return []comparator{{"<", lo}}, true
	case "<=":
		up.pre = []string{"0"}
		return []comparator{{"<", up}}, true
	}
	return span(lo, up), true
}

// partialEdges are a partial version's floor and the floor of the next one
// (1 -> 1.0.0, 2.0.0; 1.2 -> 1.2.0, 1.3.0).
func partialEdges(nums []uint64) (lo, up semver) {
	copy(lo.core[:], nums)
	up = lo
	up.core[len(nums)-1]++
	return lo, up
}

// partial reads "1", "1.2", "1.x", "1.2.*", "*" (a span) or "1.2.3" (exact).
func partial(f string) ([]comparator, bool) {
	if v, ok := parseSemver(f); ok {
		return []comparator{{"=", v}}, true
	}
	nums, ok := parsePartial(f)
	if !ok {
		return nil, false
	}
	switch len(nums) {
	case 0:
		return []comparator{{">=", semver{}}}, true
	case 1:
		return span(semver{core: [3]uint64{nums[0]}}, semver{core: [3]uint64{nums[0] + 1}}), true
	}
	return span(semver{core: [3]uint64{nums[0], nums[1]}}, semver{core: [3]uint64{nums[0], nums[1] + 1}}), true
}

// parsePartial reads the numbers of a partial version, stopping at the first
// wildcard ("x", "X", "*"); a full version or a number after a wildcard is
// not a partial.
func parsePartial(f string) ([]uint64, bool) {
	f = strings.TrimPrefix(f, "v")
	var nums []uint64
	wild := false
	parts := strings.Split(f, ".")
	if len(parts) > 3 {
		return nil, false
	}
	for _, p := range parts {
		if p == "x" || p == "X" || p == "*" {
			wild = true
			continue
		}
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil || wild || (len(p) > 1 && p[0] == '0') {
			return nil, false
		}
		nums = append(nums, n)
	}
	return nums, len(nums) < 3
}

// caret: ^1.2.3 := >=1.2.3 <2.0.0; ^0.2.3 := <0.3.0; ^0.0.3 := <0.0.4;
// a partial caret (^1, ^1.2) is its span from the partial's floor.
func caret(f string) ([]comparator, bool) {
	v, ok := floor(f)
	if !ok {
		return nil, false
	}
	var up semver
	switch {
	case v.core[0] > 0 || !strings.Contains(f, "."):
		up.core = [3]uint64{v.core[0] + 1}
	case v.core[1] > 0 || strings.Count(f, ".") < 2:
		up.core = [3]uint64{0, v.core[1] + 1}
	default:
		up.core = [3]uint64{0, 0, v.core[2] + 1}
	}
	return span(v, up), true
}

// tilde: ~1.2.3 := >=1.2.3 <1.3.0; ~1 := >=1.0.0 <2.0.0.
func tilde(f string) ([]comparator, bool) {
	v, ok := floor(f)
	if !ok {
		return nil, false
	}
	up := semver{core: [3]uint64{v.core[0], v.core[1] + 1}}
	if !strings.Contains(f, ".") {
		up.core = [3]uint64{v.core[0] + 1}
	}
	return span(v, up), true
}

// floor reads a full version, or a partial's lowest version.
func floor(f string) (semver, bool) {
	if v, ok := parseSemver(f); ok {
		return v, true
	}
	nums, ok := parsePartial(f)
	if !ok || len(nums) == 0 {
		return semver{}, false
	}
	var v semver
	copy(v.core[:], nums)
	return v, true
}

// span is >=lo <up, up's pre-releases excluded (up has the pre-release "0"
// in npm's reading: <2.0.0 admits no 2.0.0-rc.1).
func span(lo, up semver) []comparator {
	up.pre = []string{"0"}
	return []comparator{{">=", lo}, {"<", up}}
}

// Match reports whether version v is in the range.
func (r Range) Match(v string) bool {
	sv, ok := parseSemver(v)
	if !ok {
		return false
	}
	for _, set := range r.sets {
		if matchSet(set, sv) {
			return true
		}
	}
	return false
}

func matchSet(set []comparator, v semver) bool {
	for _, c := range set {
		if !c.match(v) {
			return false
		}
	}
	if len(v.pre) == 0 {
		return true
	}
	for _, c := range set { // a pre-release needs a named pre-release of its core
		if len(c.v.pre) > 0 && c.v.core == v.core && !(c.op == "<" && c.v.pre[0] == "0" && len(c.v.pre) == 1) {
			return true
		}
	}
	return false
}

func (c comparator) match(v semver) bool {
	d := compareSemver(v, c.v)
	switch c.op {
	case "=":
		return d == 0
	case ">":
		return d > 0
	case ">=":
		return d >= 0
	case "<":
		return d < 0
	}
	return d <= 0
}

// compareSemver orders two parsed versions (CompareVersions' precedence).
func compareSemver(a, b semver) int {
	for i := range 3 {
		if c := cmpInt(a.core[i], b.core[i]); c != 0 {
			return c
		}
	}
	return comparePre(a.pre, b.pre)
}
