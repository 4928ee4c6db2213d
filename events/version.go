package events

import (
	"cmp"
	"strings"
)

// compareVersions is a total order on "ver" values. Dotted numbers compare
// numerically component by component ("2" < "10", "1.9" < "1.10"), then
// lexically ("1" < "1.0"); any dotted number ranks above any other value;
// other values compare lexically.
func compareVersions(a, b string) int {
	na, nb := isDottedNumber(a), isDottedNumber(b)
	if na != nb {
		return cmp.Compare(boolRank(na), boolRank(nb))
	}
	if na {
		if c := compareDotted(a, b); c != 0 {
			return c
		}
	}
	return strings.Compare(a, b)
}

// boolRank maps false to 0 and true to 1.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// isDottedNumber reports whether s is digits separated by single dots.
func isDottedNumber(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if part == "" || strings.Trim(part, "0123456789") != "" {
			return false
		}
	}
	return true
}

// compareDotted compares dotted numbers; missing components count as zero.
func compareDotted(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		if c := compareDigits(component(pa, i), component(pb, i)); c != 0 {
			return c
		}
	}
	return 0
}

// component returns parts[i], or "0" past the end.
func component(parts []string, i int) string {
	if i < len(parts) {
		return parts[i]
	}
	return "0"
}

// compareDigits compares two digit strings of any length as integers.
func compareDigits(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}
