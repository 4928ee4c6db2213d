package directory

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// Registrations keeps what agent/register and agent/unregister recorded
// beyond the events: which agents registered with a signed proof (their
// heartbeats are events, the registration itself is not) and the
// unverified registrations (claims), with their latest heartbeat. Without
// one (Config.Registrations nil) they live in memory only, as they always
// did; in a database several instances share (agentd/agentpg,
// `serve --postgres`) every instance's Run restores them.
// Implementations are safe for concurrent use.
type Registrations interface {
	// SetRegistered records that agent (hex) registered (on) or
	// unregistered (off) with a proof.
	SetRegistered(ctx context.Context, agent string, on bool) error
	// PutClaim records c, replacing the claim with the same Key.
	PutClaim(ctx context.Context, c StoredClaim) error
	// DeleteClaim forgets the claim with key (none is not an error).
	DeleteClaim(ctx context.Context, key string) error
	// Load returns the agents registered with proof (sorted) and the
	// claims (by Key).
	Load(ctx context.Context) (registered []string, claims []StoredClaim, err error)
}

// StoredClaim is an unverified registration as Registrations keeps it.
type StoredClaim struct {
	Key    string // the directory's key for it (claim:<id or hex>)
	Claim  Claim
	Status string    // its latest heartbeat's status
	At     time.Time // and time
}

// MemoryRegistrations is Registrations in memory: what a Directory
// without Config.Registrations amounts to, for tests and one process.
type MemoryRegistrations struct {
	mu         sync.Mutex
	registered map[string]bool
	claims     map[string]StoredClaim
}

var _ Registrations = (*MemoryRegistrations)(nil)

// NewMemoryRegistrations returns an empty MemoryRegistrations.
func NewMemoryRegistrations() *MemoryRegistrations {
	return &MemoryRegistrations{registered: map[string]bool{}, claims: map[string]StoredClaim{}}
}

// SetRegistered records agent's registration.
func (m *MemoryRegistrations) SetRegistered(_ context.Context, agent string, on bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if on {
		m.registered[agent] = true
	} else {
		delete(m.registered, agent)
	}
	return nil
}

// PutClaim records c.
func (m *MemoryRegistrations) PutClaim(_ context.Context, c StoredClaim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c.Claim.Tools, c.Claim.Models = slices.Clone(c.Claim.Tools), slices.Clone(c.Claim.Models)
	c.Claim.Specializations, c.Claim.Auth = slices.Clone(c.Claim.Specializations), slices.Clone(c.Claim.Auth)
	m.claims[c.Key] = c
	return nil
}

// DeleteClaim forgets the claim with key.
func (m *MemoryRegistrations) DeleteClaim(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.claims, key)
	return nil
}

// Load returns what was recorded.
func (m *MemoryRegistrations) Load(context.Context) ([]string, []StoredClaim, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var reg []string
	for a := range m.registered {
		reg = append(reg, a)
	}
	slices.Sort(reg)
	var claims []StoredClaim
	for _, c := range m.claims {
		claims = append(claims, c)
	}
	slices.SortFunc(claims, func(a, b StoredClaim) int { return compareStrings(a.Key, b.Key) })
	return reg, claims, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// persistTimeout bounds a Registrations write made by a call that takes
// no context (RegisterClaim, HeartbeatClaim).
const persistTimeout = 10 * time.Second

// restore applies Config.Registrations after the events are loaded.
func (d *Directory) restore(ctx context.Context) error { return d.ReloadRegistrations(ctx) }

// ReloadRegistrations makes the index agree with Config.Registrations
// (another instance sharing them registered, unregistered or claimed):
// the registered flag of agents known from events is the stored one; the
// claims are the stored ones (a claim of a pubkey known from signed events
// is dropped, as RegisterClaim would refuse it). Run calls it; without
// Config.Registrations it does nothing.
func (d *Directory) ReloadRegistrations(ctx context.Context) error {
	if d.cfg.Registrations == nil {
		return nil
	}
	reg, claims, err := d.cfg.Registrations.Load(ctx)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.applyStoredClaims(claims)
	registered := map[string]bool{}
	for _, a := range reg {
		registered[a] = true
	}
	d.stored = registered // heartbeats ingested later know it too
	for key, e := range d.agents {
		if e.claim != nil || e.registered == registered[key] {
			continue
		}
		e.registered = registered[key]
		if e.registered {
			d.dropClaim(key)
		}
		d.refresh(e)
	}
	return nil
}

// applyStoredClaims makes the claims in the index the stored ones.
func (d *Directory) applyStoredClaims(claims []StoredClaim) {
	stored := map[string]bool{}
	for _, c := range claims {
		stored[c.Key] = true
		e := d.entryFor(c.Key)
		e.claim = &claimState{id: c.Claim.ID, reason: c.Claim.reason(), claim: c.Claim}
		e.card = c.Claim.card()
		e.heartbeat = claimBeat(c.Claim.ID, c.Status, c.At)
		e.registered = true
		d.refresh(e)
	}
	for key, e := range d.agents {
		if e.claim != nil && !stored[key] {
			old := e.caps
			e.caps = nil
			d.reindexCaps(e, old)
			delete(d.agents, key)
		}
	}
}

// claimBeat is the heartbeat a claim's status at a time stands for.
func claimBeat(id, status string, at time.Time) *events.Heartbeat {
	return &events.Heartbeat{Agent: id, Status: status, CreatedAt: nostr.Timestamp(at.Unix())}
}

// persistClaim records the claim of e (status now) in Registrations.
func (d *Directory) persistClaim(ctx context.Context, key string, c Claim, status string, at time.Time) error {
	if d.cfg.Registrations == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, persistTimeout)
	defer cancel()
	return d.cfg.Registrations.PutClaim(ctx, StoredClaim{Key: key, Claim: c, Status: status, At: at})
}

// persistRegistered records a proven (un)registration of agent; a
// registration also forgets the agent's claim, as Register drops it.
func (d *Directory) persistRegistered(ctx context.Context, agent string, on bool) error {
	if d.cfg.Registrations == nil {
		return nil
	}
	if err := d.cfg.Registrations.SetRegistered(ctx, agent, on); err != nil || !on {
		return err
	}
	return d.cfg.Registrations.DeleteClaim(ctx, claimPrefix+agent)
}
