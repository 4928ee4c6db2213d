package events

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// KindHeartbeat is an agent heartbeat (NIP-AC proposal): addressable, one per
// agent, signed by the agent itself.
const KindHeartbeat = 30333

// Heartbeat statuses ("status" tag).
const (
	StatusActive  = "active"
	StatusBusy    = "busy"
	StatusOffline = "offline"
)

// Heartbeat refusal reasons (documented in docs/KINDS.md).
const (
	reasonHeartbeatSigner = "d must be the signing agent's pubkey"
	reasonStatus          = `must be "active", "busy" or "offline"`
	reasonCount           = "not a non-negative integer"
	reasonTimestamp       = "not a unix timestamp"
	reasonAgentCard       = "not an ACP agent object"
)

// Heartbeat is a kind-30333 agent heartbeat: the agent says it is alive, how
// busy it is and what it can do. The NIP-40 expiration makes a heartbeat
// vanish from relays a few intervals after it stops being renewed.
type Heartbeat struct {
	ID        string
	PubKey    string // the agent (signer)
	CreatedAt nostr.Timestamp

	Agent        string   // "d": the agent's pubkey (= PubKey)
	Status       string   // StatusActive, StatusBusy or StatusOffline
	Capacity     int      // "capacity": concurrent tasks it accepts (0: not said)
	Load         int      // "load": tasks it is running now
	Capabilities []string // one "capability" tag each (tools, capability packages)
	Kinds        []int    // one "k" tag each: event kinds it handles
	Expiration   nostr.Timestamp
	// Card is the content decoded: the ACP agent object (name, capabilities,
	// costMetrics, free-form metrics). nil when the content is empty.
	Card *AgentCard
}

// AgentCard is the part of the ACP agent object (spec §3.1) agentnode reads
// and writes; a heartbeat's optional content and a registration's payload.
type AgentCard struct {
	ID           string            `json:"id,omitempty"`
	Name         string            `json:"name,omitempty"`
	Capabilities *CardCapabilities `json:"capabilities,omitempty"`
	CostMetrics  *CostMetrics      `json:"costMetrics,omitempty"`
	Metrics      map[string]any    `json:"metrics,omitempty"`
}

// CardCapabilities is the ACP "capabilities" object.
type CardCapabilities struct {
	Tools           []string `json:"tools,omitempty"`
	Models          []string `json:"models,omitempty"`
	Specializations []string `json:"specializations,omitempty"`
	Protocols       []string `json:"protocols,omitempty"`
}

// CostMetrics is the ACP "costMetrics" object.
type CostMetrics struct {
	CostPerToken         float64 `json:"costPerToken,omitempty"`
	AverageSpeed         float64 `json:"averageSpeed,omitempty"`
	AverageExecutionTime float64 `json:"averageExecutionTime,omitempty"`
}

// ValidateHeartbeat checks the kind-30333 rules (docs/KINDS.md) and returns
// nil or a *ValidationError, like Validate.
func ValidateHeartbeat(evt *nostr.Event) error {
	if evt == nil {
		return ErrNilEvent
	}
	return validateHeartbeat(evt)
}

// validateHeartbeat holds the kind-30333 rules, in order.
var validateHeartbeat = all(
	checkTagNames,
	required("d"),
	eachValue("d", IsHex64, ErrBadPubKey, ErrBadPubKey.Error()),
	checkHeartbeatSigner,
	required("status"),
	eachValue("status", isStatus, ErrBadValue, reasonStatus),
	eachValue("capacity", isCount, ErrBadValue, reasonCount),
	eachValue("load", isCount, ErrBadValue, reasonCount),
	nonEmpty("capability"),
	eachValue("k", isKind, ErrBadValue, reasonKindNumber),
	eachValue("expiration", isTimestamp, ErrBadValue, reasonTimestamp),
	checkAgentCard,
)

// checkHeartbeatSigner: the heartbeat is the agent's own (d = pubkey).
func checkHeartbeatSigner(evt *nostr.Event) error {
	if valueOf(evt.Tags, "d") != evt.PubKey {
		return invalidBecause(evt.Kind, "d", ErrBadPubKey, reasonHeartbeatSigner)
	}
	return nil
}

// checkAgentCard: content is empty or an ACP agent object.
func checkAgentCard(evt *nostr.Event) error {
	if _, err := decodeCard(evt.Content); err != nil {
		return invalidBecause(evt.Kind, "content", ErrBadContent, reasonAgentCard)
	}
	return nil
}

// decodeCard decodes an agent object; empty content is no card.
func decodeCard(s string) (*AgentCard, error) {
	if blank(s) {
		return nil, nil
	}
	if !isJSONObject(s) {
		return nil, ErrBadContent
	}
	var c AgentCard
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return nil, err
	}
	return &c, nil
}

func isStatus(s string) bool {
	return s == StatusActive || s == StatusBusy || s == StatusOffline
}

// isCount reports whether s is a decimal integer in 0..1e9.
func isCount(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n <= 1e9 && !strings.HasPrefix(s, "+")
}

// isTimestamp reports whether s is a non-negative decimal unix time.
func isTimestamp(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n >= 0 && !strings.HasPrefix(s, "+")
}

// ParseHeartbeat validates a kind-30333 event and returns its typed view.
func ParseHeartbeat(evt *nostr.Event) (*Heartbeat, error) {
	if evt == nil {
		return nil, ErrNilEvent
	}
	if evt.Kind != KindHeartbeat {
		return nil, invalidBecause(evt.Kind, "kind", ErrWrongKind, "want "+strconv.Itoa(KindHeartbeat))
	}
	if err := ValidateHeartbeat(evt); err != nil {
		return nil, err
	}
	card, _ := decodeCard(evt.Content) // validated above
	h := &Heartbeat{
		ID: evt.ID, PubKey: evt.PubKey, CreatedAt: evt.CreatedAt,
		Agent: valueOf(evt.Tags, "d"), Status: valueOf(evt.Tags, "status"),
		Capacity: atoiOr0(valueOf(evt.Tags, "capacity")), Load: atoiOr0(valueOf(evt.Tags, "load")),
		Capabilities: dedupe(valuesOf(evt.Tags, "capability")),
		Expiration:   nostr.Timestamp(atoiOr0(valueOf(evt.Tags, "expiration"))),
		Card:         card,
	}
	for _, k := range valuesOf(evt.Tags, "k") {
		n, _ := parseKind(k)
		h.Kinds = append(h.Kinds, n)
	}
	return h, nil
}

// atoiOr0 parses a validated decimal, 0 when absent.
func atoiOr0(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// Template returns the unsigned kind-30333 event for h: d, status, capacity,
// load, one capability and one k per entry, expiration (when set), and the
// Card as JSON content (empty without one). CreatedAt is left to the caller.
func (h *Heartbeat) Template() nostr.Event {
	tags := nostr.Tags{{"d", h.Agent}, {"status", h.Status}}
	tags = append(tags, nostr.Tag{"capacity", strconv.Itoa(h.Capacity)}, nostr.Tag{"load", strconv.Itoa(h.Load)})
	tags = appendEach(tags, "capability", slices.Compact(slices.Sorted(slices.Values(h.Capabilities))))
	for _, k := range h.Kinds {
		tags = append(tags, nostr.Tag{"k", strconv.Itoa(k)})
	}
	if h.Expiration > 0 {
		tags = append(tags, nostr.Tag{"expiration", strconv.FormatInt(int64(h.Expiration), 10)})
	}
	tags = append(tags, nostr.Tag{"alt", "agent heartbeat: " + h.Status})
	return nostr.Event{Kind: KindHeartbeat, Tags: tags, Content: h.Card.content()}
}

// content renders the card as JSON ("" for a nil card).
func (c *AgentCard) content() string {
	if c == nil {
		return ""
	}
	b, err := json.Marshal(c)
	if err != nil {
		return ""
	}
	return string(b)
}
