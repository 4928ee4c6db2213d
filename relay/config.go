package relay

import (
	"log/slog"
	"reflect"

	"github.com/agentnode/agentnode/internal/memguard"
	"net/netip"
	"time"
)

// Config is everything a Relay needs; the zero value plus a DataDir is a
// working relay with the defaults below.
type Config struct {
	// DataDir holds the LMDB environment (events/) and the search index (search/).
	DataDir string
	// Postgres, when set, is the URL of a PostgreSQL database that holds
	// the events instead (relay/pgstore; DataDir is then unused by the
	// relay): several instances on one database act as one relay. See
	// docs/POSTGRES.md.
	Postgres string
	// Name, Description, PubKey (the operator's, 64-hex) and Contact go
	// into the NIP-11 document (SetOperator changes them).
	Name        string
	Description string
	PubKey      string
	Contact     string
	// Version is the software version reported by NIP-11.
	Version string
	// Limits bound what a client may send; zero fields take DefaultLimits.
	Limits Limits
	// Logger receives structured logs; nil means slog.Default().
	Logger *slog.Logger
	// RestrictedKinds are served only to an authenticated (NIP-42) author
	// or "p"-tagged reader of each event; events of these kinds that name
	// no reader are public. nil means DefaultRestrictedKinds; an empty
	// non-nil slice restricts nothing. See docs/RELAY.md.
	RestrictedKinds []int
	// AddressedKinds are the restricted kinds also served, without
	// authentication, to a subscription naming the recipient in "#p"
	// (policies.Restricted). nil means DefaultAddressedKinds; an empty
	// non-nil slice makes every restricted kind need AUTH (strict NIP-17
	// inbox rule, which stock ContextVM and gift-wrap clients cannot read).
	AddressedKinds []int
	// TrustedProxies are the reverse proxies (IPs or CIDRs) whose
	// X-Forwarded-For and X-Real-IP name the client, for the per-IP event
	// rate limit (policies.ClientIP, policies.EventRateLimiter). nil:
	// none, the TCP peer is the client and those headers are ignored.
	TrustedProxies []netip.Prefix
	// Negentropy bounds NIP-77 sessions (relay/negentropy.go); zero
	// fields take DefaultNegentropyLimits.
	Negentropy NegentropyLimits
	// Operators (64-hex pubkeys) may manage the relay over NIP-86 with
	// NIP-98 HTTP auth (docs/RELAY.md#management); none: NIP-86 answers
	// 401 to everyone. SetManagement changes them at run time.
	Operators []string
	// AgentKindsOnly stores only AgentNetworkKinds and the kinds the
	// operator allows over NIP-86 (allowkind).
	AgentKindsOnly bool
}

// DefaultRestrictedKinds: 4290 (Agent State Model op envelopes, one event
// per reader for private and shared state; agentd/state/replicate), 1059
// and 21059 (NIP-59 gift wraps, and ContextVM's ephemeral ones) and 25910
// (JSON-RPC over Nostr, ContextVM: a request is read by its caller and the
// p-tagged target, a reply by its author and the p-tagged caller).
var DefaultRestrictedKinds = []int{4290, 1059, 21059, 25910}

// DefaultAddressedKinds: the restricted kinds stock clients read without
// AUTH by naming themselves in "#p" (gift wraps and ContextVM messages);
// docs/RELAY.md "Restricted kinds" gives the reasoning.
var DefaultAddressedKinds = []int{1059, 21059, 25910}

// addressedKinds returns the addressed kinds in force.
func (c Config) addressedKinds() []int {
	if c.AddressedKinds == nil {
		return DefaultAddressedKinds
	}
	return c.AddressedKinds
}

// restrictedKinds returns the kinds in force.
func (c Config) restrictedKinds() []int {
	if c.RestrictedKinds == nil {
		return DefaultRestrictedKinds
	}
	return c.RestrictedKinds
}

// Limits are the relay's size, rate and query bounds. They are enforced and
// published in NIP-11 as they are. The tags are the keys of agentnode
// serve's --config "relay" section (json; unit:"s" a number of seconds,
// unit:"mb" of megabytes, negative: none; min:"0" refuses a negative
// value) and which ones ReloadLimits applies at run time (reload:"live").
type Limits struct {
	MaxMessageBytes  int           `json:"max_message_bytes" min:"0"`                              // largest websocket message accepted
	MaxContentBytes  int           `json:"max_content_bytes" min:"0" reload:"live"`                // largest event content
	MaxEventTags     int           `json:"max_event_tags" min:"0" reload:"live"`                   // most tags on one event
	MaxTagValueBytes int           `json:"max_tag_value_bytes" min:"0" reload:"live"`              // longest single tag value
	MaxLimit         int           `json:"max_limit" min:"0" reload:"live"`                        // largest REQ limit honoured (larger ones are capped)
	DefaultLimit     int           `json:"default_limit" min:"0" reload:"live"`                    // limit applied to a REQ without one
	MaxCount         int           `json:"max_count" min:"0"`                                      // COUNT stops here and reports approximate
	CountTimeout     time.Duration `json:"count_timeout_seconds" unit:"s" min:"0"`                 // COUNT gives up after this long
	MaxQueryBytes    int           `json:"max_query_bytes" min:"0"`                                // bytes of events one REQ holds at once; a larger answer is streamed in chunks of this (a search stops there)
	QueryMemory      int           `json:"query_memory" min:"0"`                                   // bytes of events all queries of the process hold at most; past them queries are refused (rate-limited)
	EventsPerSecond  int           `json:"events_per_second" reload:"live"`                        // sustained events per second per IP
	EventsBurst      int           `json:"events_burst" reload:"live"`                             // burst of events per IP
	MaxFutureSkew    time.Duration `json:"max_future_skew_seconds" unit:"s" min:"0" reload:"live"` // created_at may be at most this far ahead

	// Per-connection budgets (docs/RELAY.md, "Facing the open network").
	MaxSubscriptions      int           `json:"max_subscriptions" min:"0"`               // open subscriptions per connection
	MaxFilters            int           `json:"max_filters" min:"0" reload:"live"`       // filters in one REQ
	MaxFilterValues       int           `json:"max_filter_values" min:"0" reload:"live"` // ids, authors, kinds or values of one tag in one filter
	MaxSearchWords        int           `json:"max_search_words" min:"0" reload:"live"`  // words in one NIP-50 search
	MaxConcurrentQueries  int           `json:"max_concurrent_queries" min:"0"`          // REQ/COUNT queries of one connection answered at once (others wait)
	MaxConcurrentMessages int           `json:"max_concurrent_messages" min:"0"`         // messages of one connection handled at once (the reader waits beyond)
	MaxOutboundBytes      int           `json:"max_outbound_bytes" min:"0"`              // bytes queued for a client before it is cut off as a slow consumer
	MaxOutboundMessages   int           `json:"max_outbound_messages" min:"0"`           // messages queued for a client before it is cut off
	RequestsPerSecond     int           `json:"requests_per_second" reload:"live"`       // sustained REQ and COUNT messages per connection
	RequestsBurst         int           `json:"requests_burst" reload:"live"`            // burst of REQ and COUNT messages per connection
	WriteTimeout          time.Duration `json:"write_timeout_seconds" unit:"s" min:"0"`  // a write to a client that takes longer ends the connection

	// Connections and memory (docs/RELAY.md, "Connections and memory").
	// Zero takes the default; a negative value is no bound.
	MaxConnections      int   `json:"max_connections"`             // websockets open at once (default: from RLIMIT_NOFILE, DefaultMaxConnections)
	MaxConnectionsPerIP int   `json:"max_connections_per_ip"`      // websockets open at once from one client address
	MemoryCeiling       int64 `json:"memory_ceiling_mb" unit:"mb"` // bytes the process may hold; new work is shed before it (default: memguard.DefaultCeiling)
}

// DefaultLimits are the limits of a zero-configuration node.
var DefaultLimits = Limits{
	MaxMessageBytes:  512 * 1024,
	MaxContentBytes:  maxStorable,
	MaxEventTags:     2000,
	MaxTagValueBytes: 16 * 1024,
	MaxLimit:         5000,
	DefaultLimit:     500,
	MaxCount:         1_000_000,
	CountTimeout:     5 * time.Second,
	MaxQueryBytes:    16 << 20,
	QueryMemory:      192 << 20,
	EventsPerSecond:  200,
	EventsBurst:      2000,
	MaxFutureSkew:    15 * time.Minute,

	MaxSubscriptions:      200,
	MaxFilters:            20,
	MaxFilterValues:       1000,
	MaxSearchWords:        32,
	MaxConcurrentQueries:  4,
	MaxConcurrentMessages: 64,
	MaxOutboundBytes:      8 << 20,
	MaxOutboundMessages:   50_000,
	RequestsPerSecond:     50,
	RequestsBurst:         500,
	WriteTimeout:          10 * time.Second,

	MaxConnectionsPerIP: 256,
	// MaxConnections and MemoryCeiling depend on the machine: see
	// DefaultMaxConnections and memguard.DefaultCeiling.
}

// maxStorable is the largest content, and the largest single tag item,
// the event store's binary layout can hold (16-bit lengths).
const maxStorable = 65535

// withDefaults fills every zero field from DefaultLimits (MaxConnections
// and MemoryCeiling from the machine); content and tag values are clamped
// to what the store can hold.
func (l Limits) withDefaults() Limits {
	v, d := reflect.ValueOf(&l).Elem(), reflect.ValueOf(DefaultLimits)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			v.Field(i).Set(d.Field(i))
		}
	}
	if l.MaxConnections == 0 {
		l.MaxConnections = DefaultMaxConnections()
	}
	if l.MemoryCeiling == 0 {
		l.MemoryCeiling = memguard.DefaultCeiling()
	}
	l.MaxContentBytes = min(l.MaxContentBytes, maxStorable)
	l.MaxTagValueBytes = min(l.MaxTagValueBytes, maxStorable)
	return l
}
