package state

import (
	"math/rand/v2"
	"testing"
)

// applyHunks replays hunks (last first, as the translator does).
func applyHunks(a, b []rune, hs []hunk) string {
	out := append([]rune(nil), a...)
	for i := len(hs) - 1; i >= 0; i-- {
		h := hs[i]
		ins := append([]rune(nil), inserted(h, b)...)
		out = append(out[:h.pos], append(ins, out[h.pos+h.del:]...)...)
	}
	return string(out)
}

func TestDiffSeq(t *testing.T) {
	cases := [][2]string{
		{"", ""}, {"", "abc"}, {"abc", ""}, {"abc", "abc"}, {"hello world", "hello brave new world"},
		{"the cat sat", "a cat sat down"}, {"abcabba", "cbabac"}, {"héllo wörld", "hallo welt"},
	}
	for _, c := range cases {
		a, b := []rune(c[0]), []rune(c[1])
		if got := applyHunks(a, b, diffSeq(a, b)); got != c[1] {
			t.Errorf("%q -> %q: got %q", c[0], c[1], got)
		}
	}
	// Minimality on a two-place edit: only the changed runes are touched.
	a, b := []rune("aXbbbbbbbbbbYc"), []rune("aZbbbbbbbbbbWc")
	hs := diffSeq(a, b)
	if len(hs) != 2 || hs[0].del != 1 || hs[1].del != 1 {
		t.Errorf("hunks = %+v", hs)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		a, b := randRunes(r), randRunes(r)
		if got := applyHunks(a, b, diffSeq(a, b)); got != string(b) {
			t.Fatalf("%q -> %q: got %q", string(a), string(b), got)
		}
	}
}

func randRunes(r *rand.Rand) []rune {
	out := make([]rune, r.IntN(40))
	for i := range out {
		out[i] = rune('a' + r.IntN(4))
	}
	return out
}

func TestDiffSeq_Fallback(t *testing.T) {
	a, b := make([]int, 3000), make([]int, 3000)
	for i := range a {
		a[i], b[i] = i, -i-1
	}
	hs := diffSeq(a, b)
	if len(hs) != 1 || hs[0].del != 3000 || hs[0].n != 3000 {
		t.Fatalf("fallback hunks: %d", len(hs))
	}
}

// The text translator diffs only what lies between the common prefix and
// suffix; those end on rune boundaries, so multi-byte runes that share
// leading or trailing bytes are never split.
func TestCommonAffixes(t *testing.T) {
	alphabet := []rune("aé€éaöx")
	r := rand.New(rand.NewPCG(3, 4))
	randText := func() string {
		out := make([]rune, r.IntN(12))
		for i := range out {
			out[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(out)
	}
	cases := [][2]string{{"héllo", "hállo"}, {"aé", "aè"}, {"éa", "èa"}, {"", "€"}, {"€€", "€"}, {"x€", "€"}}
	for range 2000 {
		cases = append(cases, [2]string{randText(), randText()})
	}
	for _, c := range cases {
		old, s := c[0], c[1]
		pre, suf := commonAffixes(old, s)
		if old[:pre] != s[:pre] || old[len(old)-suf:] != s[len(s)-suf:] || pre+suf > min(len(old), len(s)) {
			t.Fatalf("%q %q: pre %d suf %d", old, s, pre, suf)
		}
		a, b := []rune(old[pre:len(old)-suf]), []rune(s[pre:len(s)-suf])
		if string(a) != old[pre:len(old)-suf] || string(b) != s[pre:len(s)-suf] {
			t.Fatalf("%q %q: a split rune (pre %d suf %d)", old, s, pre, suf)
		}
		if got := old[:pre] + applyHunks(a, b, diffSeq(a, b)) + old[len(old)-suf:]; got != s {
			t.Fatalf("%q -> %q: got %q", old, s, got)
		}
	}
}
