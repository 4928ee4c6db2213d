package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentnode/agentnode/relay"
)

// serveRelay is the --config file's "relay" section: the relay's size,
// rate and per-connection budgets (docs/RELAY.md). Every key is optional;
// an absent or zero one keeps the default (relay.DefaultLimits), and a
// negative rate turns that rate limit off.
type serveRelay struct {
	MaxMessageBytes       int `json:"max_message_bytes"`
	MaxContentBytes       int `json:"max_content_bytes"`
	MaxEventTags          int `json:"max_event_tags"`
	MaxTagValueBytes      int `json:"max_tag_value_bytes"`
	MaxLimit              int `json:"max_limit"`
	DefaultLimit          int `json:"default_limit"`
	MaxCount              int `json:"max_count"`
	CountTimeoutSeconds   int `json:"count_timeout_seconds"`
	MaxQueryBytes         int `json:"max_query_bytes"`
	QueryMemory           int `json:"query_memory"`
	EventsPerSecond       int `json:"events_per_second"`
	EventsBurst           int `json:"events_burst"`
	MaxFutureSkewSeconds  int `json:"max_future_skew_seconds"`
	MaxSubscriptions      int `json:"max_subscriptions"`
	MaxFilters            int `json:"max_filters"`
	MaxFilterValues       int `json:"max_filter_values"`
	MaxSearchWords        int `json:"max_search_words"`
	MaxConcurrentQueries  int `json:"max_concurrent_queries"`
	MaxConcurrentMessages int `json:"max_concurrent_messages"`
	MaxOutboundBytes      int `json:"max_outbound_bytes"`
	MaxOutboundMessages   int `json:"max_outbound_messages"`
	RequestsPerSecond     int `json:"requests_per_second"`
	RequestsBurst         int `json:"requests_burst"`
	WriteTimeoutSeconds   int `json:"write_timeout_seconds"`
	// Connections and memory: 0 or absent takes the default (derived
	// from RLIMIT_NOFILE, 256 per address, 3/4 of the machine's memory),
	// a negative value turns that bound off.
	MaxConnections      int   `json:"max_connections"`
	MaxConnectionsPerIP int   `json:"max_connections_per_ip"`
	MemoryCeilingMB     int64 `json:"memory_ceiling_mb"`

	// NIP-77 bounds (serve_config_negentropy.go).
	NegentropyMaxSessions  int `json:"negentropy_max_sessions"`
	NegentropyMaxItems     int `json:"negentropy_max_items"`
	NegentropyMaxHeldItems int `json:"negentropy_max_held_items"`
	NegentropyFrameBytes   int `json:"negentropy_frame_bytes"`
	NegentropyIdleSeconds  int `json:"negentropy_idle_seconds"`

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
	if c.file == nil || c.file.Relay.AddressedKinds == nil {
		return nil
	}
	return append([]int{}, *c.file.Relay.AddressedKinds...)
}

// parseRelaySection decodes the "relay" section, refusing unknown keys and
// negative sizes.
func parseRelaySection(top map[string]json.RawMessage, f *serveFile) error {
	raw, ok := top["relay"]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f.Relay); err != nil {
		return fmt.Errorf(`"relay": %v`, err)
	}
	r := f.Relay
	for name, v := range map[string]int{
		"max_message_bytes": r.MaxMessageBytes, "max_content_bytes": r.MaxContentBytes, "max_event_tags": r.MaxEventTags,
		"max_tag_value_bytes": r.MaxTagValueBytes, "max_limit": r.MaxLimit, "default_limit": r.DefaultLimit,
		"max_count": r.MaxCount, "count_timeout_seconds": r.CountTimeoutSeconds, "max_future_skew_seconds": r.MaxFutureSkewSeconds,
		"max_query_bytes": r.MaxQueryBytes, "query_memory": r.QueryMemory,
		"max_subscriptions": r.MaxSubscriptions, "max_filters": r.MaxFilters, "max_filter_values": r.MaxFilterValues,
		"max_search_words": r.MaxSearchWords, "max_concurrent_queries": r.MaxConcurrentQueries,
		"max_concurrent_messages": r.MaxConcurrentMessages, "max_outbound_bytes": r.MaxOutboundBytes,
		"max_outbound_messages": r.MaxOutboundMessages, "write_timeout_seconds": r.WriteTimeoutSeconds,
		"negentropy_max_sessions": r.NegentropyMaxSessions, "negentropy_max_items": r.NegentropyMaxItems,
		"negentropy_max_held_items": r.NegentropyMaxHeldItems, "negentropy_frame_bytes": r.NegentropyFrameBytes,
		"negentropy_idle_seconds": r.NegentropyIdleSeconds,
	} {
		if v < 0 {
			return fmt.Errorf(`"relay.%s" must not be negative`, name)
		}
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
