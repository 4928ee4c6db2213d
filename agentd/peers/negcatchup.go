package peers

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy/storage/vector"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/relay/negsync"
)

// Catch-up by NIP-77 (docs/PEERS.md): once the live subscription is
// acknowledged, each interest filter (whole, whatever the watermark) is
// reconciled with the peer by negentropy, and only the events the local
// store lacks are fetched, by id. A peer that does not speak
// NIP-77, or refuses a session (a window over its item bound), gets the
// REQ catch-up instead.

// errNoNIP77: the negentropy catch-up cannot be used with this peer or
// local store; the REQ catch-up runs instead.
var errNoNIP77 = errors.New("peers: no NIP-77 catch-up")

// negMaxItems bounds the local side of one reconciliation.
const negMaxItems = 250_000

// negFetchBatch is the number of ids asked for in one REQ.
const negFetchBatch = 500

// negCatchUp reconciles every track's window and hands the missing events
// to out, in the order fetched; it closes nothing and returns when done.
func (p *peer) negCatchUp(ctx context.Context, conn *relayclient.Conn, filters []nostr.Filter, out chan<- *nostr.Event) error {
	local, ok := p.s.cfg.Local.(negsync.Local)
	if !ok {
		return errNoNIP77
	}
	for _, f := range filters {
		there, err := p.reconcile(ctx, conn, local, f)
		if err != nil {
			return err
		}
		if err := fetchIDs(ctx, conn, there, out); err != nil {
			return err
		}
	}
	return nil
}

// reconcile returns the ids of f's window the peer has and local lacks.
func (p *peer) reconcile(ctx context.Context, conn *relayclient.Conn, local negsync.Local, f nostr.Filter) ([]string, error) {
	vec := vector.New()
	if err := local.NegentropyItems(ctx, f, negMaxItems, vec.Insert); err != nil {
		return nil, fmt.Errorf("%w: local window: %v", errNoNIP77, err)
	}
	vec.Seal()
	_, there, _, err := negsync.Reconcile(ctx, conn, vec, negsync.Options{Filter: f, Answer: p.s.cfg.DialTimeout})
	var negErr *relayclient.NegError
	if errors.Is(err, negsync.ErrUnsupported) || errors.As(err, &negErr) {
		return nil, fmt.Errorf("%w: %w", errNoNIP77, err)
	}
	if err != nil {
		return nil, fmt.Errorf("peers: negentropy: %w", disconnected(err))
	}
	return there, nil
}

// fetchIDs asks the peer for ids, negFetchBatch at a time.
func fetchIDs(ctx context.Context, conn *relayclient.Conn, ids []string, out chan<- *nostr.Event) error {
	for start := 0; start < len(ids); start += negFetchBatch {
		part := ids[start:min(start+negFetchBatch, len(ids))]
		evts, err := conn.Query(ctx, nostr.Filters{{IDs: part, Limit: len(part)}})
		if err != nil {
			return fmt.Errorf("peers: fetch by id: %w", disconnected(err))
		}
		for _, evt := range evts {
			select {
			case out <- evt:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
	}
	return nil
}

// negFilters are the tracks' filters, whole: no since (a reconciliation
// costs what differs, not what matches, so the watermark is not needed to
// keep it cheap, and an old event that reached the peer while we were
// away is found too), no limit.
func negFilters(tracks []track) []nostr.Filter {
	out := make([]nostr.Filter, len(tracks))
	for i, t := range tracks {
		out[i] = withWindow(t.filter, 0, 0, 0)
	}
	return out
}

// negRun is a follower's NIP-77 catch-up: one goroutine, owned by the
// follower (stopNeg cancels and waits for it). events is unbuffered, so
// that every event has been taken when done is sent.
type negRun struct {
	events chan *nostr.Event
	done   chan error
	stop   func()
}

// startNeg starts the NIP-77 catch-up unless the peer is known not to
// speak it; false: use the REQ catch-up.
func (f *follower) startNeg(ctx context.Context) bool {
	if f.p.noNIP77.Load() {
		return false
	}
	if _, ok := f.p.s.cfg.Local.(negsync.Local); !ok {
		return false
	}
	nctx, cancel := context.WithCancel(ctx)
	f.neg = negRun{events: make(chan *nostr.Event), done: make(chan error, 1)}
	filters, events, done := negFilters(f.tracks), f.neg.events, f.neg.done
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		done <- f.p.negCatchUp(nctx, f.conn, filters, events)
	}()
	f.neg.stop = func() { cancel(); <-finished }
	return true
}

// stopNeg ends the NIP-77 catch-up's goroutine, if any, and waits for it.
func (f *follower) stopNeg() {
	if f.neg.stop != nil {
		f.neg.stop()
		f.neg.stop = nil
	}
}

// finishNeg completes the catch-up after the NIP-77 one ended with err;
// errNoNIP77 asks the caller for the REQ catch-up.
func (f *follower) finishNeg(ctx context.Context, err error, caught *atomic.Bool) error {
	f.stopNeg()
	if errors.Is(err, errNoNIP77) {
		if errors.Is(err, negsync.ErrUnsupported) {
			f.p.noNIP77.Store(true)
		}
		f.p.log.Info("catching up by REQ instead of NIP-77", "reason", err)
		return err
	}
	if err != nil {
		return err
	}
	f.complete(ctx, caught)
	return nil
}

// noteNIPs records from the peer's NIP-11 supported_nips whether it speaks
// NIP-77 (an empty list says nothing: the catch-up then tries it).
func (p *peer) noteNIPs(nips []any) {
	if len(nips) == 0 {
		return
	}
	speaks := false
	for _, n := range nips {
		if v, ok := n.(float64); ok && v == 77 {
			speaks = true
		}
	}
	p.noNIP77.Store(!speaks)
}
