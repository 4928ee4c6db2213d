package main

import (
	"fmt"
	"time"

	"github.com/agentnode/agentnode/relay"
)

// serveRelay is the --config file's "relay" section: the relay's size,
// rate and per-connection budgets (docs/RELAY.md). Every key is optional;
// an absent or zero one keeps the default (relay.DefaultLimits), a
// negative rate turns that rate limit off, and a key tagged min:"0" may
// not be negative (checkRelay).
type serveRelay struct {
	MaxMessageBytes       int `json:"max_message_bytes" min:"0"`
	MaxContentBytes       int `json:"max_content_bytes" min:"0"`
	MaxEventTags          int `json:"max_event_tags" min:"0"`
	MaxTagValueBytes      int `json:"max_tag_value_bytes" min:"0"`
	MaxLimit              int `json:"max_limit" min:"0"`
	DefaultLimit          int `json:"default_limit" min:"0"`
	MaxCount              int `json:"max_count" min:"0"`
	CountTimeoutSeconds   int `json:"count_timeout_seconds" min:"0"`
	MaxQueryBytes         int `json:"max_query_bytes" min:"0"`
	QueryMemory           int `json:"query_memory" min:"0"`
	EventsPerSecond       int `json:"events_per_second"`
	EventsBurst           int `json:"events_burst"`
	MaxFutureSkewSeconds  int `json:"max_future_skew_seconds" min:"0"`
	MaxSubscriptions      int `json:"max_subscriptions" min:"0"`
	MaxFilters            int `json:"max_filters" min:"0"`
	MaxFilterValues       int `json:"max_filter_values" min:"0"`
	MaxSearchWords        int `json:"max_search_words" min:"0"`
	MaxConcurrentQueries  int `json:"max_concurrent_queries" min:"0"`
	MaxConcurrentMessages int `json:"max_concurrent_messages" min:"0"`
	MaxOutboundBytes      int `json:"max_outbound_bytes" min:"0"`
	MaxOutboundMessages   int `json:"max_outbound_messages" min:"0"`
	RequestsPerSecond     int `json:"requests_per_second"`
	RequestsBurst         int `json:"requests_burst"`
	WriteTimeoutSeconds   int `json:"write_timeout_seconds" min:"0"`
	// Connections and memory: 0 or absent takes the default (derived
	// from RLIMIT_NOFILE, 256 per address, 3/4 of the machine's memory),
	// a negative value turns that bound off.
	MaxConnections      int   `json:"max_connections"`
	MaxConnectionsPerIP int   `json:"max_connections_per_ip"`
	MemoryCeilingMB     int64 `json:"memory_ceiling_mb"`

	// NIP-77 bounds (serve_config_negentropy.go).
	NegentropyMaxSessions  int `json:"negentropy_max_sessions" min:"0"`
	NegentropyMaxItems     int `json:"negentropy_max_items" min:"0"`
	NegentropyMaxHeldItems int `json:"negentropy_max_held_items" min:"0"`
	NegentropyFrameBytes   int `json:"negentropy_frame_bytes" min:"0"`
	NegentropyIdleSeconds  int `json:"negentropy_idle_seconds" min:"0"`

	// Operators (npub or hex) may manage the relay over NIP-86 with NIP-98
	// auth; AgentKindsOnly stores the agent network's kinds only
	// (serve_manage.go, docs/RELAY.md#management).
	Operators      []string `json:"operators"`
	AgentKindsOnly bool     `json:"agent_kinds_only"`

	// AddressedKinds: the restricted kinds served without AUTH to a
	// filter naming the recipient in #p (absent: relay.DefaultAddressedKinds;
	// [] : none, the strict NIP-17 rule). docs/RELAY.md "Restricted kinds".
	AddressedKinds *[]int `json:"addressed_kinds"`
}

// addressedKinds is the relay's AddressedKinds: nil (the default) unless
// the "relay" section names them.
func (c *ServeCommand) addressedKinds() []int {
	if k := c.conf().Relay.AddressedKinds; k != nil {
		return append([]int{}, *k...)
	}
	return nil
}

// checkRelay refuses negative sizes (the fields tagged min:"0"), bad
// operator keys and a default limit above the maximum.
func checkRelay(f *serveFile) error {
	r := f.Relay
	if err := checkMin("relay", &r); err != nil {
		return err
	}
	if _, err := operatorKeys(r.Operators); err != nil {
		return err
	}
	if r.DefaultLimit > 0 && r.MaxLimit > 0 && r.DefaultLimit > r.MaxLimit {
		return fmt.Errorf(`"relay": default_limit %d is above max_limit %d`, r.DefaultLimit, r.MaxLimit)
	}
	return nil
}

// relayLimits are the limits the relay runs with: the "relay" section over
// relay.DefaultLimits (zero fields are filled by the relay itself).
func (c *ServeCommand) relayLimits() relay.Limits { return relayLimitsFrom(c.file) }

// relayLimitsFrom is relayLimits over the config file f (nil: none).
func relayLimitsFrom(f *serveFile) relay.Limits {
	if f == nil {
		return relay.Limits{}
	}
	r := f.Relay
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	return relay.Limits{
		MaxMessageBytes: r.MaxMessageBytes, MaxContentBytes: r.MaxContentBytes, MaxEventTags: r.MaxEventTags,
		MaxTagValueBytes: r.MaxTagValueBytes, MaxLimit: r.MaxLimit, DefaultLimit: r.DefaultLimit,
		MaxCount: r.MaxCount, CountTimeout: sec(r.CountTimeoutSeconds),
		MaxQueryBytes: r.MaxQueryBytes, QueryMemory: r.QueryMemory,
		EventsPerSecond: r.EventsPerSecond, EventsBurst: r.EventsBurst, MaxFutureSkew: sec(r.MaxFutureSkewSeconds),
		MaxSubscriptions: r.MaxSubscriptions, MaxFilters: r.MaxFilters, MaxFilterValues: r.MaxFilterValues,
		MaxSearchWords: r.MaxSearchWords, MaxConcurrentQueries: r.MaxConcurrentQueries,
		MaxConcurrentMessages: r.MaxConcurrentMessages, MaxOutboundBytes: r.MaxOutboundBytes,
		MaxOutboundMessages: r.MaxOutboundMessages, RequestsPerSecond: r.RequestsPerSecond,
		RequestsBurst: r.RequestsBurst, WriteTimeout: sec(r.WriteTimeoutSeconds),
		MaxConnections: r.MaxConnections, MaxConnectionsPerIP: r.MaxConnectionsPerIP,
		MemoryCeiling: megabytes(r.MemoryCeilingMB),
	}
}

// megabytes converts a "_mb" key, keeping its sign (negative: no bound).
func megabytes(n int64) int64 {
	if n < 0 {
		return -1
	}
	return n << 20
}
