package testkit

import "testing"

// Fresh makes an empty backing for one case of a conformance suite and
// returns how to open handles on it (B: an Open func of the suite).
type Fresh[B any] func(t *testing.T) B

// Case is one test of a conformance suite, run on a fresh backing.
type Case[B any] struct {
	Name string
	Test func(t *testing.T, open B)
}

// RunSuite runs each case as a subtest, in order, each on a backing fresh
// makes for it: one conformance suite, run against every backend.
func RunSuite[B any](t *testing.T, fresh Fresh[B], cases ...Case[B]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { c.Test(t, fresh(t)) })
	}
}
