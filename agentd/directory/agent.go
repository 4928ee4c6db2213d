package directory

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// Agent is one directory entry, as agentSearch and agent://directory show it.
type Agent struct {
	ID              string    `json:"id"` // hex pubkey
	Npub            string    `json:"npub"`
	Name            string    `json:"name,omitempty"`
	Owner           string    `json:"owner,omitempty"` // the owner the agent's profile names
	OwnerVerified   bool      `json:"ownerVerified"`   // and the owner's 14199 lists it
	DefinitionID    string    `json:"definitionId,omitempty"`
	Capabilities    []string  `json:"capabilities,omitempty"`
	Models          []string  `json:"models,omitempty"`
	Specializations []string  `json:"specializations,omitempty"`
	CostPerToken    float64   `json:"costPerToken"`
	QualityScore    float64   `json:"qualityScore"` // 0..10, trust-weighted
	EvaluationCount int       `json:"evaluationCount"`
	Available       bool      `json:"available"`
	Status          string    `json:"status,omitempty"` // latest heartbeat's, "" without one
	Load            int       `json:"load"`
	Capacity        int       `json:"capacity"`
	LastHeartbeat   time.Time `json:"lastHeartbeat,omitzero"`
	Local           bool      `json:"local"`
	Registered      bool      `json:"registered"` // registered over JSON-RPC (Register)
	// Unverified is set, with the reason, for a registration nothing
	// proves (RegisterClaim: the protocol's auth object, no signed proof);
	// such entries rank below every proven agent. "" for proven ones.
	Unverified string `json:"unverified,omitempty"`
}

// entry is everything the directory holds about one agent; view is the
// Agent derived from it, refreshed whenever an input changes.
type entry struct {
	id         string
	profile    *events.Profile   // latest bot profile, nil if none
	heartbeat  *events.Heartbeat // latest heartbeat (or registration), nil if none
	card       *events.AgentCard // latest agent object seen in a heartbeat
	beats      int               // heartbeats ingested
	registered bool
	claim      *claimState // an unverified registration (claims.go), nil if none

	view   Agent
	search string   // lower-case name, capabilities, specializations, models
	caps   []string // lower-case capabilities, sorted
}

// known reports whether the entry is an agent the directory lists.
func (e *entry) known() bool {
	return e.profile != nil || e.heartbeat != nil || e.registered
}

// npub encodes a hex pubkey ("" if it cannot).
func npub(hex string) string {
	s, err := nip19.EncodePublicKey(hex)
	if err != nil {
		return ""
	}
	return s
}

// rebuild recomputes e.view's event-derived fields (not score, availability).
func (e *entry) rebuild(def *Definition, ownerClaims *events.OwnerClaims, local bool) {
	v := Agent{ID: e.id, Npub: e.view.Npub, Local: local, Registered: e.registered,
		QualityScore: e.view.QualityScore, EvaluationCount: e.view.EvaluationCount}
	if v.Npub == "" {
		v.Npub = npub(e.id)
	}
	var tools []string
	if e.profile != nil {
		v.Name, v.DefinitionID, v.Owner = e.profile.Name, e.profile.DefinitionID, e.profile.Owner
		v.OwnerVerified = events.CheckOwnership(e.id, e.profile, ownerClaims).Verified
	}
	if def != nil {
		tools = append(tools, def.Tools...)
		v.Name = cmp.Or(v.Name, def.Title)
	}
	if h := e.heartbeat; h != nil {
		v.Status, v.Load, v.Capacity = h.Status, h.Load, h.Capacity
		v.LastHeartbeat = h.CreatedAt.Time()
		tools = append(tools, h.Capabilities...)
	}
	tools = append(tools, e.applyCard(&v)...)
	v.Capabilities = sortedSet(tools)
	if e.claim != nil {
		v.ID, v.Npub, v.Unverified = e.claim.id, npub(e.claim.id), e.claim.reason
	}
	e.view = v
	e.index()
}

// applyCard copies the agent object's fields into v and returns its tools.
func (e *entry) applyCard(v *Agent) []string {
	c := e.card
	if c == nil {
		return nil
	}
	v.Name = cmp.Or(v.Name, c.Name)
	if c.CostMetrics != nil {
		v.CostPerToken = c.CostMetrics.CostPerToken
	}
	if c.Capabilities == nil {
		return nil
	}
	v.Models = sortedSet(c.Capabilities.Models)
	v.Specializations = sortedSet(c.Capabilities.Specializations)
	return c.Capabilities.Tools
}

// index refreshes the lower-case search fields from the view.
func (e *entry) index() {
	v := &e.view
	e.caps = make([]string, len(v.Capabilities))
	for i, c := range v.Capabilities {
		e.caps[i] = strings.ToLower(c)
	}
	slices.Sort(e.caps)
	parts := append([]string{v.Name}, v.Capabilities...)
	parts = append(parts, v.Specializations...)
	parts = append(parts, v.Models...)
	e.search = strings.ToLower(strings.Join(parts, "\n"))
}

// sortedSet returns the non-blank values, trimmed, sorted and deduplicated.
func sortedSet(values []string) []string {
	var out []string
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// available reports whether the entry's latest heartbeat keeps it available at now.
func (e *entry) available(now time.Time, ttl time.Duration) bool {
	h := e.heartbeat
	if h == nil || h.Status == events.StatusOffline {
		return false
	}
	if h.Expiration > 0 && !now.Before(h.Expiration.Time()) {
		return false
	}
	return now.Before(h.CreatedAt.Time().Add(ttl))
}

// snapshot returns a copy of the view with availability at now.
func (e *entry) snapshot(now time.Time, ttl time.Duration) Agent {
	a := e.view
	a.Available = e.available(now, ttl)
	a.Capabilities = slices.Clone(a.Capabilities)
	a.Models = slices.Clone(a.Models)
	a.Specializations = slices.Clone(a.Specializations)
	return a
}

// newer reports whether evt's (created_at, id) supersedes the stored one's.
func newer(createdAt nostr.Timestamp, id string, oldAt nostr.Timestamp, oldID string) bool {
	return createdAt > oldAt || (createdAt == oldAt && id < oldID)
}
