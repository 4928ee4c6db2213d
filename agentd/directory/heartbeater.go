package directory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// Status is what a local agent reports in its heartbeat.
type Status struct {
	Status       string   // events.StatusActive (default), StatusBusy or StatusOffline
	Load         int      // tasks running now
	Capacity     int      // concurrent tasks accepted
	Capabilities []string // tool and capability-package names
	Kinds        []int    // event kinds handled
	// Card is the ACP agent object published as the content (name, models,
	// specializations, costMetrics); nil for none.
	Card *events.AgentCard
}

// HeartbeaterConfig configures a Heartbeater. Agents, Keys, Status and
// Publish are required.
type HeartbeaterConfig struct {
	// Interval between rounds; 0: DefaultHeartbeatInterval.
	Interval time.Duration
	// ExpiryIntervals: each heartbeat expires (NIP-40) this many intervals
	// after it is made, and never sooner than MinHeartbeatExpiry; 0: 3.
	ExpiryIntervals int
	// Agents lists the local agents' hex pubkeys, asked every round.
	Agents func() []string
	// Keys returns an agent's secret key (hex or nsec).
	Keys func(ctx context.Context, agent string) (string, error)
	// Status returns an agent's current status.
	Status func(agent string) Status
	// Publish stores a signed event (relay.Relay.Publish).
	Publish func(ctx context.Context, evt *nostr.Event) error
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Logger; nil: slog.Default().
	Logger *slog.Logger
}

// DefaultHeartbeatInterval is the heartbeat period of local agents.
const DefaultHeartbeatInterval = 30 * time.Second

// MinHeartbeatExpiry is the shortest NIP-40 lifetime a heartbeat gets, so
// that clock skew between node and relay cannot make it born expired.
const MinHeartbeatExpiry = time.Minute

// Heartbeater publishes a kind 30333 heartbeat for each local agent every
// interval. New starts nothing; Run beats once and then on a ticker until
// ctx ends.
type Heartbeater struct {
	cfg HeartbeaterConfig

	lastMu sync.Mutex
	last   map[string]time.Time // per agent: created_at of its latest heartbeat
}

// NewHeartbeater returns a Heartbeater for cfg.
func NewHeartbeater(cfg HeartbeaterConfig) *Heartbeater {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultHeartbeatInterval
	}
	if cfg.ExpiryIntervals <= 0 {
		cfg.ExpiryIntervals = 3
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Heartbeater{cfg: cfg}
}

// Run checks the config, then beats every Interval (the first round at
// once) until ctx ends; then it returns nil. It sends no offline beat
// (Offline does: a restart is not an absence).
func (h *Heartbeater) Run(ctx context.Context) error {
	if err := h.check(); err != nil {
		return err
	}
	t := time.NewTicker(h.cfg.Interval)
	defer t.Stop()
	for {
		if err := h.Beat(ctx); err != nil && ctx.Err() == nil {
			h.cfg.Logger.Warn("heartbeat round", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (h *Heartbeater) check() error {
	c := h.cfg
	if c.Agents == nil || c.Keys == nil || c.Status == nil || c.Publish == nil {
		return errors.New("heartbeater: Agents, Keys, Status and Publish are required")
	}
	return nil
}

// Beat publishes one heartbeat per local agent now. It returns every
// agent's failure joined (the others are still published).
func (h *Heartbeater) Beat(ctx context.Context) error {
	var errs []error
	for _, agent := range h.cfg.Agents() {
		if err := h.beatOne(ctx, agent, h.cfg.Status(agent)); err != nil {
			errs = append(errs, fmt.Errorf("heartbeat %s: %w", agent, err))
		}
	}
	return errors.Join(errs...)
}

// Offline publishes an "offline" heartbeat for every local agent (a clean
// leave; Run does not send it, so a restart is not an absence).
func (h *Heartbeater) Offline(ctx context.Context) error {
	var errs []error
	for _, agent := range h.cfg.Agents() {
		s := h.cfg.Status(agent)
		s.Status, s.Load = events.StatusOffline, 0
		if err := h.beatOne(ctx, agent, s); err != nil {
			errs = append(errs, fmt.Errorf("heartbeat %s: %w", agent, err))
		}
	}
	return errors.Join(errs...)
}

// stamp is the time of agent's next heartbeat: now, but always at least
// one second after its previous one, so that a heartbeat made in the same
// second (an offline one at shutdown, a beat after an install) replaces
// the earlier one instead of losing NIP-01's same-second tie on ids.
func (h *Heartbeater) stamp(agent string) time.Time {
	h.lastMu.Lock()
	defer h.lastMu.Unlock()
	t := h.cfg.Now().Truncate(time.Second)
	if prev, ok := h.last[agent]; ok && !t.After(prev) {
		t = prev.Add(time.Second)
	}
	if h.last == nil {
		h.last = map[string]time.Time{}
	}
	h.last[agent] = t
	return t
}

// beatOne signs and publishes agent's heartbeat.
func (h *Heartbeater) beatOne(ctx context.Context, agent string, s Status) error {
	sk, err := h.cfg.Keys(ctx, agent)
	if err != nil {
		return fmt.Errorf("key: %w", err)
	}
	ttl := max(time.Duration(h.cfg.ExpiryIntervals)*h.cfg.Interval, MinHeartbeatExpiry)
	evt, err := BuildHeartbeat(sk, s, h.stamp(agent), ttl)
	if err != nil {
		return err
	}
	if evt.PubKey != agent {
		return fmt.Errorf("key: it belongs to %s", evt.PubKey)
	}
	return h.cfg.Publish(ctx, evt)
}

// BuildHeartbeat returns the signed kind 30333 for the agent whose secret key
// is sk (hex or nsec), made at now and expiring after ttl (0: no expiration).
// Register's proofs are built this way too.
func BuildHeartbeat(sk string, s Status, now time.Time, ttl time.Duration) (*nostr.Event, error) {
	hexSK, err := events.ParseSecretKey(sk)
	if err != nil {
		return nil, err
	}
	pk, err := nostr.GetPublicKey(hexSK)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	hb := &events.Heartbeat{Agent: pk, Status: s.Status, Load: s.Load, Capacity: s.Capacity,
		Capabilities: s.Capabilities, Kinds: s.Kinds, Card: s.Card}
	if hb.Status == "" {
		hb.Status = events.StatusActive
	}
	if ttl > 0 {
		hb.Expiration = nostr.Timestamp(now.Add(ttl).Unix())
	}
	evt := hb.Template()
	evt.CreatedAt = nostr.Timestamp(now.Unix())
	if err := evt.Sign(hexSK); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	if err := events.ValidateHeartbeat(&evt); err != nil {
		return nil, err
	}
	return &evt, nil
}
