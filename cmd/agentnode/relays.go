package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/relay"
)

// DefaultRelay is the relay a zero-configuration CLI talks to: the local node.
const DefaultRelay = "ws://" + DefaultListen

// DefaultTimeout bounds every network call of the CLI.
const DefaultTimeout = 10 * time.Second

// fetchLimit is the limit of list queries: relays cap it at their own
// maximum; filtering, version resolution and --limit happen here.
const fetchLimit = 5000

// netFlags are the flags of every command that talks to relays.
//
// Reads query every --relay and merge the results (deduplicated by id).
// Writes go to every --relay too, and fail when any relay refuses or cannot
// be reached. A relay that cannot be reached fails the command.
type netFlags struct {
	relays  stringList
	timeout time.Duration
}

func (m *Main) addNetFlags(fs *flag.FlagSet, nf *netFlags) {
	fs.Var(&nf.relays, "relay", "relay URL, repeatable: reads merge all, writes go to all (default "+DefaultRelay+", env AGENTNODE_RELAY, comma-separated)")
	fs.DurationVar(&nf.timeout, "timeout", DefaultTimeout, "bound on each network call")
}

// urls returns the relays to use: the flags, else AGENTNODE_RELAY, else the default.
func (nf *netFlags) urls(m *Main) []string {
	list := []string(nf.relays)
	if len(list) == 0 {
		list = strings.Split(m.envOr("AGENTNODE_RELAY", DefaultRelay), ",")
	}
	var out []string
	for _, u := range list {
		if u = strings.TrimSpace(u); u != "" && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// session is a set of open relay connections (relayclient, checking the
// signature of every event it is sent). It satisfies relay.Querier.
type session struct {
	timeout time.Duration
	urls    []string
	conns   []*relayclient.Conn
}

var _ relay.Querier = (*session)(nil)

// dial connects to every relay of nf, each within the timeout.
func (m *Main) dial(ctx context.Context, nf *netFlags) (*session, error) {
	s := &session{timeout: nf.timeout}
	for _, url := range nf.urls(m) {
		cctx, cancel := context.WithTimeout(ctx, nf.timeout)
		conn, err := relayclient.Dial(cctx, url, relayclient.Options{Verify: true})
		cancel()
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("connect to %s: %w (is `agentnode serve` running, or is --relay right?)", url, err)
		}
		s.urls = append(s.urls, conn.URL())
		s.conns = append(s.conns, conn)
	}
	return s, nil
}

// Close closes every connection.
func (s *session) Close() {
	for _, c := range s.conns {
		c.Close()
	}
}

// QuerySync queries every relay and returns the merged events, deduplicated
// by id, newest first.
func (s *session) QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error) {
	seen := map[string]bool{}
	var out []*nostr.Event
	for _, c := range s.conns {
		evts, err := s.queryOne(ctx, c, filter)
		if err != nil {
			return nil, err
		}
		for _, e := range evts {
			if !seen[e.ID] {
				seen[e.ID] = true
				out = append(out, e)
			}
		}
	}
	slices.SortFunc(out, newestFirst)
	return out, nil
}

// newestFirst orders events by created_at descending, then id ascending.
func newestFirst(a, b *nostr.Event) int {
	return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), strings.Compare(a.ID, b.ID))
}

// queryOne collects the stored events matching filter from one relay, up to
// its EOSE. A CLOSED from the relay, a dropped connection and a timeout are
// errors.
func (s *session) queryOne(ctx context.Context, c *relayclient.Conn, filter nostr.Filter) ([]*nostr.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	evts, err := c.Query(ctx, nostr.Filters{filter})
	var closed *relayclient.ClosedError
	switch {
	case err == nil:
		return evts, nil
	case errors.As(err, &closed):
		return nil, fmt.Errorf("query %s: relay closed the query: %s", c.URL(), closed.Reason)
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("query %s: no answer within %s", c.URL(), s.timeout)
	case errors.Is(err, relayclient.ErrSubscriptionEnded):
		return nil, fmt.Errorf("query %s: subscription ended before the stored events did: %w", c.URL(), err)
	default:
		return nil, fmt.Errorf("query %s: %w", c.URL(), err)
	}
}

// get returns the event with id, or nil when no relay has it.
func (s *session) get(ctx context.Context, id string) (*nostr.Event, error) {
	evts, err := s.QuerySync(ctx, nostr.Filter{IDs: []string{id}, Limit: 1})
	if err != nil || len(evts) == 0 {
		return nil, err
	}
	return evts[0], nil
}

// publish sends evt to every relay and returns the URLs that accepted it.
// A refusal carries the relay's OK message verbatim ("invalid: ...").
func (s *session) publish(ctx context.Context, evt *nostr.Event) ([]string, error) {
	var accepted []string
	var errs []error
	for _, c := range s.conns {
		if err := s.publishOne(ctx, c, evt); err != nil {
			errs = append(errs, err)
			continue
		}
		accepted = append(accepted, c.URL())
	}
	return accepted, errors.Join(errs...)
}

func (s *session) publishOne(ctx context.Context, c *relayclient.Conn, evt *nostr.Event) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	err := c.Publish(ctx, evt)
	var refused *relayclient.RefusedError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: no OK within %s", c.URL(), s.timeout)
	case errors.As(err, &refused):
		return fmt.Errorf("%s refused the event: %s", c.URL(), refused.Reason)
	default:
		return fmt.Errorf("%s: %w", c.URL(), err)
	}
}
