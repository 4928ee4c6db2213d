// Package testkit holds the test setup the project's packages share:
// fresh keys, a fake clock, waiting for a condition with a deadline,
// running a component's Run(ctx) for the rest of a test, work striped
// over goroutines (Parallel), NIP-59 gift wraps (Seal, GiftWrap,
// JunkWrap, Encrypt), the scaffolding of the conformance suites
// (RunSuite) and running the binary for its JSON (RunJSON);
// testkit/testrelay opens the embedded relay in-process. It is imported
// by tests only, and imports nothing of the project (so that any
// package's in-package tests may use it).
//
//	k := testkit.NewKey(t)
//	clk := testkit.NewClock(time.Now())
//	testkit.Run(t, "directory", dir.Run, dir.Ready()) // returns once loaded; stopped at cleanup
//	testkit.WaitFor(t, 5*time.Second, "the agent listed", func() bool { _, ok := dir.Get(k.PK); return ok })
//
// Waiting polls: use it where nothing can be awaited (another process, a
// socket, a store read); where a test waits on timers, testing/synctest
// makes the wait instant and exact.
package testkit
