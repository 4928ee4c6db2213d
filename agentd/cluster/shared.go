package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/agentpg"
	"github.com/agentnode/agentnode/agentd/lease"
)

// Config configures a Shared cluster.
type Config struct {
	// URL is the PostgreSQL database the instances share (required).
	URL string
	// DataDir is this instance's data directory: the shared API token is
	// written to its token file, which the CLI reads.
	DataDir string
	// LeaseTTL is how long an agent's lease lasts without renewal; 0:
	// lease.DefaultTTL.
	LeaseTTL time.Duration
	// AdvertiseURL is where other instances reach this one (required).
	AdvertiseURL string
	// CallTimeout bounds a call forwarded to a holder (the bound of a long
	// agent call); 0: ten minutes.
	CallTimeout time.Duration
	// Logger receives structured logs; nil: slog.Default().
	Logger *slog.Logger
	// Now is the clock deciding whether a lease is fresh and when a
	// reload may run again; nil: time.Now.
	Now func() time.Time
}

// Shared is the Cluster of an instance sharing its agents with others on
// one database.
type Shared struct {
	cfg     Config
	log     *slog.Logger
	db      *agentpg.DB
	leases  *lease.Manager
	h       *agentpg.Handover
	sync    *agentpg.StateSync // set by OpenState
	token   string             // the shared API token
	changed chan struct{}      // the agents running here changed (cap 1)
	topics  topicQueue         // DB.Listen's topics, drained by listen
	reloads gap                // anonymous reloads of the installed agents
	client  holderClient       // calls forwarded to an agent's holder
	local   Local              // set by Join

	closeOnce sync.Once
}

var _ Cluster = (*Shared)(nil)

// Open opens the agent data and the leases in the database and writes
// the shared API token to cfg.DataDir's token file. Nothing runs until
// Parts.
func Open(ctx context.Context, cfg Config) (*Shared, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 10 * time.Minute
	}
	s := &Shared{cfg: cfg, log: cfg.Logger.With("component", "cluster"), changed: make(chan struct{}, 1)}
	s.topics.init()
	if err := s.open(ctx); err != nil {
		return nil, errors.Join(err, s.Close(context.WithoutCancel(ctx)))
	}
	s.log.Info("agents shared in postgres", "instance", s.leases.Instance(), "lease_ttl", s.leases.TTL().String(), "advertise_url", cfg.AdvertiseURL)
	return s, nil
}

// open opens the database, the leases and the token.
func (s *Shared) open(ctx context.Context) error {
	db, err := agentpg.Open(ctx, s.cfg.URL)
	if err != nil {
		return fmt.Errorf("cluster: agent data in postgres: %w", err)
	}
	s.db = db
	leases, err := lease.Open(ctx, s.cfg.URL, lease.Config{TTL: s.cfg.LeaseTTL, Balance: true, URL: s.cfg.AdvertiseURL,
		Logger: s.cfg.Logger.With("component", "lease")})
	if err != nil {
		return fmt.Errorf("cluster: agent leases: %w", err)
	}
	s.leases = leases
	s.h = &agentpg.Handover{Leases: leases, Logger: s.cfg.Logger.With("component", "handover"), Changed: s.signal}
	if s.token, err = db.Token(ctx); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	s.client = holderClient{http: forwardHTTP(s.cfg.CallTimeout), token: s.token, instance: leases.Instance()}
	return writeToken(s.cfg.DataDir, s.token)
}

// writeToken makes token the API token of dataDir (the CLI reads it).
func writeToken(dataDir, token string) error {
	path := agentd.TokenPath(dataDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return fmt.Errorf("cluster: write the API token: %w", err)
	}
	return nil
}

// Close hands every lease back, so that the other instances take the
// agents at their next tick, then closes the leases and the database. It
// is a no-op once done.
func (s *Shared) Close(ctx context.Context) error {
	var err error
	s.closeOnce.Do(func() {
		if s.leases != nil {
			err = s.leases.ReleaseAll(ctx)
			s.leases.Close()
		}
		if s.db != nil {
			s.db.Close()
		}
	})
	return err
}

// Instance is this instance's id in the lease rows.
func (s *Shared) Instance() string { return s.leases.Instance() }

// Runs reports whether agent is held and replayed here.
func (s *Shared) Runs(agent string) bool { return s.h.Runs(agent) }

// Changed is ready when the agents running here changed.
func (s *Shared) Changed() <-chan struct{} { return s.changed }

// Held is the number of leases this instance holds.
func (s *Shared) Held() int { return len(s.leases.Held()) }

// signal notes that the agents running here changed (Handover.Changed).
func (s *Shared) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// forwardHTTP is the client of calls forwarded to an agent's holder: a
// holder that stops answering (a half-open connection) costs a call at
// most long, instead of holding a websocket's calls for good.
func forwardHTTP(long time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.ResponseHeaderTimeout = long
	return &http.Client{Transport: t, Timeout: long}
}
