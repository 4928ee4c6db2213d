package cap

import "testing"

func TestRange_Match(t *testing.T) {
	versions := []string{"0.1.0", "0.1.5", "0.2.0", "1.0.0-rc.1", "1.0.0", "1.2.3", "1.5.0-beta", "1.9.9", "2.0.0-rc.1", "2.0.0", "not-semver"}
	for _, tc := range []struct {
		rng  string
		want []string
	}{
		{"1", []string{"1.0.0", "1.2.3", "1.9.9"}},
		{"1.x", []string{"1.0.0", "1.2.3", "1.9.9"}},
		{"1.2", []string{"1.2.3"}},
		{"*", []string{"0.1.0", "0.1.5", "0.2.0", "1.0.0", "1.2.3", "1.9.9", "2.0.0"}},
		{"^1.0.0", []string{"1.0.0", "1.2.3", "1.9.9"}},
		{"^1.2.4", []string{"1.9.9"}},
		{"^0.1.0", []string{"0.1.0", "0.1.5"}},
		{"~1.2.0", []string{"1.2.3"}},
		{">=1.0.0 <2", []string{"1.0.0", "1.2.3", "1.9.9"}},
		{">1.2 <=2", []string{"1.9.9", "2.0.0"}},
		{"<1", []string{"0.1.0", "0.1.5", "0.2.0"}},
		{"1.2.3", []string{"1.2.3"}},
		{"^1.0.0-rc.0", []string{"1.0.0-rc.1", "1.0.0", "1.2.3", "1.9.9"}},
		{"0.1 || 2", []string{"0.1.0", "0.1.5", "2.0.0"}},
		{"=2.0.0-rc.1", []string{"2.0.0-rc.1"}},
	} {
		r, ok := ParseRange(tc.rng)
		if !ok {
			t.Fatalf("ParseRange(%q): not a range", tc.rng)
		}
		var got []string
		for _, v := range versions {
			if r.Match(v) {
				got = append(got, v)
			}
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%q matches %v, want %v", tc.rng, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%q matches %v, want %v", tc.rng, got, tc.want)
			}
		}
	}
}

func TestParseRange_refused(t *testing.T) {
	for _, s := range []string{"", " ", "abc", "1.x.2", "^", ">=", "1.2.3.4", "01", "1 || ", string(make([]byte, 300))} {
		if _, ok := ParseRange(s); ok {
			t.Fatalf("ParseRange(%q): a range, want refused", s)
		}
	}
}
