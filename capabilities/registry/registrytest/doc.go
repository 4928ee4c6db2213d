// Package registrytest makes real, signed ACP packages and publishes them
// to a real in-process relay, for the tests and benchmarks of the registry
// and of what serves it (mcpserver, cmd/agentnode).
//
// A use:
//
//	rel := registrytest.OpenRelay(t)
//	evt := registrytest.Publish(t, rel, sk, registrytest.Spec{Name: "note", Version: "1.0.0"}, 1700000000)
//	big := registrytest.SeededRelay(b, 10_000) // cached across runs in the temp dir
package registrytest
