package main

import "testing"

// The connection and memory keys of the "relay" section reach the
// relay's limits; a negative value (no bound) is kept, megabytes become
// bytes.
func TestServeConfig_relayConnectionKeys(t *testing.T) {
	var f serveFile
	err := parseServeFile([]byte(`{"relay": {"max_connections": 500, "max_connections_per_ip": -1, "memory_ceiling_mb": 64}}`), &f)
	if err != nil {
		t.Fatal(err)
	}
	lim := (&ServeCommand{file: &f}).relayLimits()
	if lim.MaxConnections != 500 || lim.MaxConnectionsPerIP != -1 || lim.MemoryCeiling != 64<<20 {
		t.Fatalf("limits %d, %d, %d; want 500, -1, %d", lim.MaxConnections, lim.MaxConnectionsPerIP, lim.MemoryCeiling, 64<<20)
	}
	f = serveFile{}
	if err := parseServeFile([]byte(`{"relay": {"memory_ceiling_mb": -5}}`), &f); err != nil {
		t.Fatal(err)
	}
	if got := (&ServeCommand{file: &f}).relayLimits().MemoryCeiling; got != -1 {
		t.Fatalf("memory_ceiling_mb -5: ceiling %d, want -1 (none)", got)
	}
}
