package cap

import (
	"strconv"
	"strings"
)

// CompareVersions orders two semantic versions (semver 2.0.0 precedence):
// -1 if a < b, 0 if equal, +1 if a > b. A pre-release sorts below its
// release (1.0.0-rc.1 < 1.0.0); build metadata is ignored; a leading "v" is
// allowed. Strings that are not semver sort below every valid version and
// among themselves bytewise.
func CompareVersions(a, b string) int {
	va, okA := parseSemver(a)
	vb, okB := parseSemver(b)
	switch {
	case !okA && !okB:
		return strings.Compare(a, b)
	case !okA:
		return -1
	case !okB:
		return 1
	}
	for i := range 3 {
		if c := cmpInt(va.core[i], vb.core[i]); c != 0 {
			return c
		}
	}
	return comparePre(va.pre, vb.pre)
}

type semver struct {
	core [3]uint64
	pre  []string
}

func parseSemver(v string) (semver, bool) {
	v = strings.TrimPrefix(v, "v")
	v, _, _ = strings.Cut(v, "+")
	core, pre, hasPre := strings.Cut(v, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 || (hasPre && pre == "") {
		return semver{}, false
	}
	var s semver
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil || (len(p) > 1 && p[0] == '0') {
			return semver{}, false
		}
		s.core[i] = n
	}
	if hasPre {
		s.pre = strings.Split(pre, ".")
	}
	return s, true
}

func cmpInt(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// comparePre orders pre-release identifier lists: none > some; then field
// by field, numeric < alphanumeric, numbers numerically; then shorter first.
func comparePre(a, b []string) int {
	switch {
	case len(a) == 0 && len(b) == 0:
		return 0
	case len(a) == 0:
		return 1
	case len(b) == 0:
		return -1
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareIdent(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmpInt(uint64(len(a)), uint64(len(b)))
}

func compareIdent(a, b string) int {
	na, errA := strconv.ParseUint(a, 10, 64)
	nb, errB := strconv.ParseUint(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return cmpInt(na, nb)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// CompareForLatest orders versions for "the latest": every release above
// every pre-release (so 1.10.0 beats 2.0.0-rc.1), then CompareVersions.
// A pre-release is the latest only when a name has no release at all.
func CompareForLatest(a, b string) int {
	if ra, rb := isRelease(a), isRelease(b); ra != rb {
		if ra {
			return 1
		}
		return -1
	}
	return CompareVersions(a, b)
}

func isRelease(v string) bool {
	s, ok := parseSemver(v)
	return ok && len(s.pre) == 0
}
