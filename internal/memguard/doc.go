// Package memguard is the process's memory governor: a ceiling on the
// memory the Go runtime holds, derived from the machine (or configured),
// and a cheap Busy check that says when to refuse new work so that the
// process stays under it.
//
// The ceiling is also the runtime's soft memory limit (SetProcessLimit:
// the garbage collector works harder as the process nears it). Busy turns
// true once the live heap (as of the last collection) plus goroutine
// stacks passes ShedFraction of the ceiling, and false again below
// ResumeFraction; it reads runtime/metrics at most once per
// SampleInterval, so calling it per request costs an atomic load.
//
//	g := memguard.New(memguard.DefaultCeiling())
//	memguard.SetProcessLimit(g.Ceiling())
//	if g.Busy() {
//		return "rate-limited: node is busy"
//	}
package memguard
