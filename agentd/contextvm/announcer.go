package contextvm

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"
)

// AnnouncerConfig configures an Announcer. Every function is required
// except Logger.
type AnnouncerConfig struct {
	// Agents are the agents to announce (those running here).
	Agents func() []string
	// Keys is an agent's secret key; ok false: not one to announce.
	Keys func(ctx context.Context, agent string) (sk string, ok bool)
	// Server builds the agent's MCP server, whose lists are announced.
	Server func(ctx context.Context, agent string) (*mcp.Server, error)
	// Info is what the agent's server announcement says besides its lists.
	Info func(agent string) ServerInfo
	// Relays are the relays the NIP-65 relay list names.
	Relays func() []string
	// Publish stores and sends one event; Query reads stored ones.
	Publish func(ctx context.Context, evt *nostr.Event) error
	Query   func(ctx context.Context, f nostr.Filter) ([]*nostr.Event, error)
	Logger  *slog.Logger
}

// Announcer keeps agents' ContextVM announcements (CEP-6 kinds
// 11316-11320 and a NIP-65 relay list) current: each agent is announced
// when Run starts and after every Changed; an agent gone since gets its
// announcements deleted (NIP-09), signed with the key remembered from
// when it was announced.
type Announcer struct {
	cfg       AnnouncerConfig
	changed   chan struct{}
	mu        sync.Mutex
	announced map[string]string // agent pubkey -> its secret key
}

// NewAnnouncer returns an Announcer; nothing is announced until Run.
func NewAnnouncer(cfg AnnouncerConfig) *Announcer {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Announcer{cfg: cfg, changed: make(chan struct{}, 1), announced: map[string]string{}}
}

// Run announces at once and again after every Changed, until ctx ends.
func (a *Announcer) Run(ctx context.Context) error {
	for {
		a.Announce(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-a.changed:
		}
	}
}

// Changed asks Run to announce again (never blocks).
func (a *Announcer) Changed() {
	select {
	case a.changed <- struct{}{}:
	default:
	}
}

// Announce publishes every agent's announcements and deletes those of
// agents gone since the last call (bounded to 30 seconds).
func (a *Announcer) Announce(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	a.mu.Lock()
	defer a.mu.Unlock()
	live := map[string]bool{}
	for _, pk := range a.cfg.Agents() {
		live[pk] = true
		sk, ok := a.cfg.Keys(ctx, pk)
		if !ok {
			continue
		}
		if err := a.announce(ctx, pk, sk); err != nil {
			a.cfg.Logger.Warn("contextvm: announcing the agent", "agent", pk, "err", err)
			continue
		}
		a.announced[pk] = sk
	}
	for pk, sk := range a.announced {
		if live[pk] {
			continue
		}
		if err := a.retract(ctx, pk, sk); err != nil {
			a.cfg.Logger.Warn("contextvm: deleting a removed agent's announcements", "agent", pk, "err", err)
			continue
		}
		delete(a.announced, pk)
	}
}

// announce publishes one agent's announcements.
func (a *Announcer) announce(ctx context.Context, pk, sk string) error {
	srv, err := a.cfg.Server(ctx, pk)
	if err != nil {
		return err
	}
	evts, err := Announcements(ctx, srv, sk, a.cfg.Info(pk), a.cfg.Relays())
	if err != nil {
		return err
	}
	for _, evt := range evts {
		if err := a.cfg.Publish(ctx, evt); err != nil {
			return fmt.Errorf("kind %d: %w", evt.Kind, err)
		}
	}
	return nil
}

// retract deletes a removed agent's stored announcements.
func (a *Announcer) retract(ctx context.Context, pk, sk string) error {
	stored, err := a.cfg.Query(ctx, nostr.Filter{Kinds: AnnouncementKinds, Authors: []string{pk}})
	if err != nil {
		return err
	}
	del, err := Retraction(stored, sk, "agent removed")
	if err != nil || del == nil {
		return err
	}
	return a.cfg.Publish(ctx, del)
}
