package agentd

import (
	"slices"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/lessons"
)

// live tracks, per agent, which stored events invalidate its composition
// and the composition itself. Its lock is never held while publishing:
// the store calls mark on the publishing goroutine.
type live struct {
	mu       sync.Mutex
	agents   map[string]*agentState
	upgrades map[string]bool // agents to check for an automatic upgrade
}

// agentState is one agent's invalidation generation and composition.
type agentState struct {
	info  agentInfo
	dirty uint64       // bumped by every event that may change the composition
	cur   *composition // nil until first composed

	composing sync.Mutex // one composition of this agent at a time
}

// agentInfo is what the invalidation rules need from the registry.
type agentInfo struct {
	pubkey, owner string
	defID, defKey string
	nudges        []string
	autoUpgrade   bool
}

func infoOf(a Agent) agentInfo {
	return agentInfo{pubkey: a.PubKey, owner: a.Owner, defID: a.DefinitionID, defKey: a.DefinitionKey,
		nudges: slices.Clone(a.Nudges), autoUpgrade: a.AutoUpgrade}
}

// composition is an agent's effective behaviour and what it was built from.
// It is immutable once stored.
type composition struct {
	gen      uint64 // the dirty generation it reflects
	key      string // lessons.Key of its inputs
	subject  lessons.Subject
	verdicts []lessons.Verdict
	eff      lessons.Effective
	missing  []string // attached nudges the store does not hold
	at       time.Time

	ids     map[string]bool // lesson and comment ids in the evidence
	authors map[string]bool // their authors
	owners  map[string]bool // owners named by the authors' profiles, and claim authors
}

func newLive(agents []Agent) *live {
	l := &live{agents: map[string]*agentState{}, upgrades: map[string]bool{}}
	for _, a := range agents {
		l.agents[a.PubKey] = &agentState{info: infoOf(a), dirty: 1}
	}
	return l
}

// set adds or updates an agent and marks it dirty.
func (l *live) set(a Agent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.agents[a.PubKey]
	if st == nil {
		st = &agentState{}
		l.agents[a.PubKey] = st
	}
	st.info = infoOf(a)
	st.dirty++
}

// drop forgets an agent.
func (l *live) drop(pubkey string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.agents, pubkey)
	delete(l.upgrades, pubkey)
}

// state returns an agent's state.
func (l *live) state(pubkey string) (*agentState, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, ok := l.agents[pubkey]
	return st, ok
}

// snapshot returns st's generation, info and current composition.
func (l *live) snapshot(st *agentState) (uint64, agentInfo, *composition) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return st.dirty, st.info, st.cur
}

// setCurrent stores a composition.
func (l *live) setCurrent(st *agentState, c *composition) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st.cur = c
}

// dirtyAgents lists agents whose composition is missing or stale.
func (l *live) dirtyAgents() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for pk, st := range l.agents {
		if st.cur == nil || st.cur.gen < st.dirty {
			out = append(out, pk)
		}
	}
	slices.Sort(out)
	return out
}

// queueUpgrade marks agents for an automatic-upgrade check.
func (l *live) queueUpgrade(pubkeys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, pk := range pubkeys {
		l.upgrades[pk] = true
	}
}

// takeUpgrades returns and clears the agents to check for an upgrade.
func (l *live) takeUpgrades() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.upgrades))
	for pk := range l.upgrades {
		out = append(out, pk)
	}
	clear(l.upgrades)
	slices.Sort(out)
	return out
}

// relevantKinds are the kinds that can change a composition or trigger an
// automatic upgrade.
var relevantKinds = map[int]bool{
	events.KindProfile: true, 3: true, events.KindDeletion: true, events.KindComment: true,
	events.KindLesson: true, events.KindDefinition: true, events.KindNudge: true, events.KindOwnerClaims: true,
}

// mark is the store hook: it marks dirty every agent evt may affect and
// queues automatic upgrades on a new definition version. It reports
// whether anything needs the background loop.
func (l *live) mark(evt *nostr.Event) bool {
	if !relevantKinds[evt.Kind] {
		return false
	}
	var def *events.Definition
	if evt.Kind == events.KindDefinition {
		def, _ = events.ParseDefinition(evt)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	woke := false
	for pk, st := range l.agents {
		if st.affectedBy(evt) {
			st.dirty++
			woke = true
		}
		if def != nil && st.info.autoUpgrade && st.info.defKey == def.Key() && st.info.defID != def.ID {
			l.upgrades[pk] = true
			woke = true
		}
	}
	return woke
}

// affectedBy reports whether evt may change st's composition. The caller
// holds l.mu.
func (st *agentState) affectedBy(evt *nostr.Event) bool {
	c := st.cur
	switch evt.Kind {
	case events.KindLesson:
		// A lesson that names no definition (TENEX's shape) is the agent's
		// own when the agent wrote it (docs/TRUST.md, unbound lessons).
		return tagIn(evt, []string{"e"}, func(v string) bool { return v == st.info.defID }) ||
			(evt.PubKey == st.info.pubkey && !tagIn(evt, []string{"e"}, func(string) bool { return true }))
	case events.KindComment:
		return c == nil || tagIn(evt, []string{"e", "E"}, has(c.ids))
	case events.KindDeletion:
		return c == nil || tagIn(evt, []string{"e"}, has(c.ids)) || tagIn(evt, []string{"e"}, st.isNudge)
	case events.KindProfile:
		return c == nil || c.authors[evt.PubKey]
	case events.KindOwnerClaims:
		return c == nil || c.owners[evt.PubKey] || tagIn(evt, []string{"p"}, has(c.authors))
	case 3:
		return evt.PubKey == st.info.owner
	case events.KindNudge:
		return st.isNudge(evt.ID)
	}
	return false
}

func (st *agentState) isNudge(id string) bool { return slices.Contains(st.info.nudges, id) }

func has(set map[string]bool) func(string) bool { return func(v string) bool { return set[v] } }

// tagIn reports whether a tag named one of names has a value for which ok holds.
func tagIn(evt *nostr.Event, names []string, ok func(string) bool) bool {
	for _, t := range evt.Tags {
		if len(t) >= 2 && slices.Contains(names, t[0]) && ok(t[1]) {
			return true
		}
	}
	return false
}

// eachComposition calls fn with every agent's current composition.
func (l *live) eachComposition(fn func(*composition)) {
	l.mu.Lock()
	var list []*composition
	for _, st := range l.agents {
		if st.cur != nil {
			list = append(list, st.cur)
		}
	}
	l.mu.Unlock()
	for _, c := range list {
		fn(c)
	}
}

// sameReach reports whether two compositions reach the same authors,
// owners and evidence ids (so Interests would not change).
func sameReach(a, b *composition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameSet(a.ids, b.ids) && sameSet(a.authors, b.authors) && sameSet(a.owners, b.owners)
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
