package events

import "testing"

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1", "1", 0}, {"2", "10", -1}, {"1.9", "1.10", -1}, {"1", "1.0", -1},
		{"01", "1", -1}, {"1.0.1", "1", 1}, {"9", "1x", 1}, {"alpha", "beta", -1},
		{"100000000000000000000000", "99999999999999999999999", 1},
	}
	for _, tt := range tests {
		if got := sign(compareVersions(tt.a, tt.b)); got != tt.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// FuzzCompareVersions checks that compareVersions is a total order, which
// LatestDefinitions needs to be independent of input order.
func FuzzCompareVersions(f *testing.F) {
	f.Add("9", "10", "1x")
	f.Add("1", "1.0", "01")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		ab, ba := sign(compareVersions(a, b)), sign(compareVersions(b, a))
		if ab != -ba || (ab == 0) != (a == b) {
			t.Fatalf("not antisymmetric: %q %q", a, b)
		}
		bc, ac := sign(compareVersions(b, c)), sign(compareVersions(a, c))
		if ab <= 0 && bc <= 0 && ac > 0 {
			t.Fatalf("not transitive: %q <= %q <= %q but %q > %q", a, b, c, a, c)
		}
	})
}
