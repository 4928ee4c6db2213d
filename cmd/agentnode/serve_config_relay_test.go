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

// Every size, count and timeout of the "relay" section refuses a negative
// value by its name; the rates and the connection bounds take one (off).
func TestServeConfig_relayNegatives(t *testing.T) {
	for _, key := range []string{"max_message_bytes", "max_content_bytes", "max_event_tags", "max_tag_value_bytes",
		"max_limit", "default_limit", "max_count", "count_timeout_seconds", "max_future_skew_seconds", "max_query_bytes",
		"query_memory", "max_subscriptions", "max_filters", "max_filter_values", "max_search_words",
		"max_concurrent_queries", "max_concurrent_messages", "max_outbound_bytes", "max_outbound_messages",
		"write_timeout_seconds", "negentropy_max_sessions", "negentropy_max_items", "negentropy_max_held_items",
		"negentropy_frame_bytes", "negentropy_idle_seconds"} {
		var f serveFile
		err := parseServeFile([]byte(`{"relay": {"`+key+`": -1}}`), &f)
		if want := `"relay.` + key + `" must not be negative`; err == nil || err.Error() != want {
			t.Errorf("%s -1: err = %v, want %q", key, err, want)
		}
	}
	for _, key := range []string{"events_per_second", "events_burst", "requests_per_second", "requests_burst",
		"max_connections", "max_connections_per_ip", "memory_ceiling_mb"} {
		var f serveFile
		if err := parseServeFile([]byte(`{"relay": {"`+key+`": -1}}`), &f); err != nil {
			t.Errorf("%s -1: %v (want accepted: off)", key, err)
		}
	}
}
