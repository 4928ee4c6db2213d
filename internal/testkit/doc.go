// Package testkit holds the test setup the project's packages share:
// fresh keys and waiting for a condition with a deadline. It is imported
// by tests only.
//
//	k := testkit.NewKey(t)
//	testkit.WaitFor(t, 5*time.Second, "the agent listed", func() bool { _, ok := dir.Get(k.PK); return ok })
//
// Waiting polls: use it where nothing can be awaited (another process, a
// socket, a store read); where a test waits on timers, testing/synctest
// makes the wait instant and exact.
package testkit
