package relay

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/nip98"
)

// maxReplayEntries bounds the NIP-98 auth events remembered; only the
// operators' are (a stranger is refused before), so it is reached only
// by an operator sending thousands of calls a minute.
const maxReplayEntries = 10_000

// AgentNetworkKinds are the kinds an agent node stores when the operator
// keeps it to the agent network (Config.AgentKindsOnly): what agents,
// owners, peers, DMs, ContextVM and state replication need
// (docs/RELAY.md#management lists why each is there).
var AgentNetworkKinds = []int{
	0,     // profiles (agents', owners')
	3,     // follows (--trust-follows)
	5,     // deletions (NIP-09)
	1059,  // NIP-17 DMs (gift wraps)
	1063,  // NIP-94 file metadata (definition attachments)
	1111,  // lesson comments (NIP-22)
	1985,  // evaluations (NIP-32)
	4129,  // lessons
	4199,  // agent definitions
	4200,  // TENEX MCP tool definitions
	4201,  // nudges
	4202,  // TENEX skills
	4290,  // Agent State Model op envelopes (state replication)
	10002, // NIP-65 relay lists (where to look things up)
	10050, // DM relay lists (NIP-17)
	11316, // ContextVM server announcements
	11317, // ContextVM tools lists
	11318, // ContextVM resources lists
	11319, // ContextVM resource templates lists
	11320, // ContextVM prompts lists
	14199, // owner claims
	14202, // TENEX whitelists
	21059, // ContextVM ephemeral gift wraps (CEP-19)
	25910, // JSON-RPC between agents (ContextVM), ephemeral
	30199, // capability packages
	30333, // heartbeats
	31933, // projects
	34199, // teams
}

// management is the relay's NIP-86 state: who may manage it, the lists,
// and what is exempt from the pubkey allowlist.
type management struct {
	lists *lists
	seen  *nip98.Replay // NIP-98 auth events already used

	mu             sync.RWMutex
	operators      map[string]bool
	agentKindsOnly bool
	exempt         func(ctx context.Context, pubkey string) bool // the node's own agents (SetExempt)
}

// openManagement loads the lists from dataDir ("" keeps them in memory).
func openManagement(cfg Config) (*management, error) {
	path := ""
	if cfg.DataDir != "" {
		path = filepath.Join(cfg.DataDir, ListsFile)
	}
	l, err := loadLists(path)
	if err != nil {
		return nil, err
	}
	m := &management{lists: l, seen: nip98.NewReplay(maxReplayEntries)}
	m.set(cfg.Operators, cfg.AgentKindsOnly)
	return m, nil
}

// set replaces the operators and the agent-kinds switch.
func (m *management) set(operators []string, agentKindsOnly bool) {
	ops := map[string]bool{}
	for _, pk := range operators {
		ops[pk] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.operators, m.agentKindsOnly = ops, agentKindsOnly
}

// isOperator reports whether pubkey may call NIP-86 methods.
func (m *management) isOperator(pubkey string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.operators[pubkey]
}

// isExempt reports whether pubkey is exempt from the pubkey allowlist:
// an operator or one of the node's agents.
func (m *management) isExempt(ctx context.Context, pubkey string) bool {
	m.mu.RLock()
	exempt, op := m.exempt, m.operators[pubkey]
	m.mu.RUnlock()
	return op || (exempt != nil && exempt(ctx, pubkey))
}

// reject is the RejectEvent policy of the lists: banned events and
// pubkeys, the pubkey allowlist (gift wraps are exempt: their pubkey is
// a one-time key), the kind lists and the agent-kinds switch.
func (m *management) reject(ctx context.Context, evt *nostr.Event) (bool, string) {
	if msg := m.rejectPubkey(ctx, evt); msg != "" {
		return true, msg
	}
	if msg := m.rejectKind(evt.Kind); msg != "" {
		return true, msg
	}
	return false, ""
}

func (m *management) rejectPubkey(ctx context.Context, evt *nostr.Event) string {
	l := m.lists
	l.mu.RLock()
	_, eventBanned := l.st.BannedEvents[evt.ID]
	_, banned := l.st.BannedPubkeys[evt.PubKey]
	_, allowed := l.st.AllowedPubkeys[evt.PubKey]
	allowlist := len(l.st.AllowedPubkeys) > 0
	l.mu.RUnlock()
	switch {
	case eventBanned:
		return "blocked: this event is banned by the relay's operator"
	case banned:
		return "blocked: this pubkey is banned by the relay's operator"
	case allowlist && !allowed && evt.Kind != 1059 && !m.isExempt(ctx, evt.PubKey):
		return "blocked: this relay accepts events only from the pubkeys its operator allows"
	}
	return ""
}

func (m *management) rejectKind(kind int) string {
	m.mu.RLock()
	agentOnly := m.agentKindsOnly
	m.mu.RUnlock()
	l := m.lists
	l.mu.RLock()
	defer l.mu.RUnlock()
	k := strconv.Itoa(kind)
	switch {
	case slices.Contains(l.st.DisallowedKinds, kind):
		return "blocked: kind " + k + " is not accepted by this relay's operator"
	case slices.Contains(l.st.AllowedKinds, kind):
		return ""
	case agentOnly && !slices.Contains(AgentNetworkKinds, kind):
		return "blocked: kind " + k + " is not accepted: this relay stores the agent network's kinds only"
	case !agentOnly && len(l.st.AllowedKinds) > 0:
		return "blocked: kind " + k + " is not among the kinds this relay's operator allows"
	}
	return ""
}

// SetManagement changes who may manage the relay over NIP-86 (64-hex
// pubkeys) and whether it stores only AgentNetworkKinds (and the kinds the
// operator allows); a SIGHUP reload calls it. It also rereads the lists'
// file, so that edits by hand take effect.
func (r *Relay) SetManagement(operators []string, agentKindsOnly bool) error {
	r.manage.set(operators, agentKindsOnly)
	return r.manage.lists.reload()
}

// SetExempt names the pubkeys the pubkey allowlist does not apply to (the
// node's own agents: they must publish whatever the operator lists). Call
// it before serving; fn must be quick and safe for concurrent use. Its ctx
// is the publishing connection's request.
func (r *Relay) SetExempt(fn func(ctx context.Context, pubkey string) bool) {
	r.manage.mu.Lock()
	defer r.manage.mu.Unlock()
	r.manage.exempt = fn
}

// validKind reports whether k is a Nostr kind (0..65535).
func validKind(k int) error {
	if k < 0 || k > 65535 {
		return fmt.Errorf("kind %d is out of range (0 to 65535)", k)
	}
	return nil
}
