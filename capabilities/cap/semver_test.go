package cap_test

import (
	"testing"

	"github.com/agentnode/agentnode/capabilities/cap"
)

func TestCompareVersions(t *testing.T) {
	// Ascending, per semver.org §11 (its own example list), plus more.
	ordered := []string{"not-semver", "0.9.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
		"1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.2.0", "1.10.0", "2.0.0"}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := cap.CompareVersions(ordered[i], ordered[j]); got != want {
				t.Errorf("CompareVersions(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	if cap.CompareVersions("1.0.0+build.5", "1.0.0") != 0 {
		t.Error("build metadata must not count")
	}
	for _, bad := range []string{"1.0", "01.0.0", "1.0.0-", "x.y.z"} {
		if cap.ValidVersion(bad) {
			t.Errorf("ValidVersion(%q) = true", bad)
		}
	}
}

func TestCompareForLatest(t *testing.T) {
	ordered := []string{"not-semver", "1.0.0-rc.1", "3.0.0-alpha", "0.9.0", "1.0.0", "1.10.0"}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := cap.CompareForLatest(ordered[i], ordered[j]); got != want {
				t.Errorf("CompareForLatest(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}
