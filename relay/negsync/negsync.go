package negsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy/storage/vector"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// Local is this node's side of a sync: *relay.Relay.
type Local interface {
	// NegentropyItems adds (created_at, id) of every event filter matches,
	// failing when more than max match.
	NegentropyItems(ctx context.Context, filter nostr.Filter, max int, add func(nostr.Timestamp, string)) error
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
	// Publish stores a signed event (a duplicate is no error).
	Publish(ctx context.Context, evt *nostr.Event) error
}

// Direction says which way events move.
type Direction int

// Directions: Down fetches what only the remote has, Up publishes what
// only the local side has, Both does both.
const (
	Down Direction = 1 << iota
	Up
	Both = Down | Up
)

// ParseDirection reads "down", "up" or "both".
func ParseDirection(s string) (Direction, error) {
	switch s {
	case "down":
		return Down, nil
	case "up":
		return Up, nil
	case "both":
		return Both, nil
	}
	return 0, fmt.Errorf("negsync: direction %q: want down, up or both", s)
}

// Options tune Sync. Zero fields take the defaults in brackets.
type Options struct {
	Filter    nostr.Filter
	Dir       Direction     // [Down]
	MaxItems  int           // most local events reconciled [1,000,000]
	FrameSize int           // largest message sent, bytes before hex [60,000: 120 kB as hex, under strfry's 128 KiB payload limit]
	Batch     int           // ids per REQ and events per upload round [500]
	Answer    time.Duration // wait for each NEG answer [30 s]; no first answer within it: ErrUnsupported
}

func (o Options) withDefaults() Options {
	o.Dir = cmp.Or(o.Dir, Down)
	o.MaxItems = cmp.Or(o.MaxItems, 1_000_000)
	o.FrameSize = max(cmp.Or(o.FrameSize, 60_000), 4096)
	o.Batch = cmp.Or(o.Batch, 500)
	o.Answer = cmp.Or(o.Answer, 30*time.Second)
	return o
}

// Result is what a Sync did.
type Result struct {
	Local       int    `json:"local"`                  // events the filter matched here
	OnlyHere    int    `json:"only_here"`              // ids only this side had
	OnlyThere   int    `json:"only_there"`             // ids only the remote had
	Rounds      int    `json:"rounds"`                 // NEG-MSG round trips
	Downloaded  int    `json:"downloaded"`             // events fetched and stored here
	Uploaded    int    `json:"uploaded"`               // events the remote accepted
	Refused     int    `json:"refused"`                // events refused (either way)
	LastRefusal string `json:"last_refusal,omitempty"` // the last refusal's reason
	BytesIn     int64  `json:"bytes_in"`               // websocket payload read from the remote during the sync
	BytesOut    int64  `json:"bytes_out"`              // and written to it
	// ReconcileBytes is the part of BytesIn+BytesOut the NIP-77
	// exchange took (the rest moved events).
	ReconcileBytes int64 `json:"reconcile_bytes"`
	// SkippedSeconds counts the seconds a Download left partly unread:
	// each held more events than its walk reads of one second.
	SkippedSeconds int `json:"skipped_seconds,omitempty"`
}

// Errors of a sync.
var (
	// ErrUnsupported: the remote did not answer NEG-OPEN (or refused it
	// as unknown): it does not speak NIP-77.
	ErrUnsupported = relayclient.ErrNegUnsupported
)

// Sync reconciles local and the relay behind conn over opt.Filter and
// moves the difference in opt.Dir.
func Sync(ctx context.Context, conn *relayclient.Conn, local Local, opt Options) (Result, error) {
	opt = opt.withDefaults()
	in0, out0 := conn.Traffic()
	var res Result
	vec, err := localItems(ctx, local, opt)
	if err != nil {
		return res, err
	}
	res.Local = vec.Size()
	here, there, rounds, err := Reconcile(ctx, conn, vec, opt)
	in1, out1 := conn.Traffic()
	res.ReconcileBytes = in1 - in0 + out1 - out0
	res.OnlyHere, res.OnlyThere, res.Rounds = len(here), len(there), rounds
	if err == nil && opt.Dir&Down != 0 {
		err = download(ctx, conn, local, there, opt.Batch, &res)
	}
	if err == nil && opt.Dir&Up != 0 {
		err = upload(ctx, conn, local, here, opt.Batch, &res)
	}
	in1, out1 = conn.Traffic()
	res.BytesIn, res.BytesOut = in1-in0, out1-out0
	return res, err
}

// localItems reads the local side's (created_at, id) set, sealed.
func localItems(ctx context.Context, local Local, opt Options) (*vector.Vector, error) {
	vec := vector.New()
	if err := local.NegentropyItems(ctx, opt.Filter, opt.MaxItems, vec.Insert); err != nil {
		return nil, fmt.Errorf("negsync: local events: %w", err)
	}
	vec.Seal()
	return vec, nil
}

// Reconcile runs the NIP-77 client over vec: the ids only this side has
// (here) and those only the remote has (there), and the round trips.
func Reconcile(ctx context.Context, conn *relayclient.Conn, vec *vector.Vector, opt Options) (here, there []string, rounds int, err error) {
	opt = opt.withDefaults()
	neg := negentropy.New(vec, opt.FrameSize)
	var wg sync.WaitGroup
	wg.Go(func() {
		for id := range neg.Haves {
			here = append(here, id)
		}
	})
	wg.Go(func() {
		for id := range neg.HaveNots {
			there = append(there, id)
		}
	})
	rounds, err = converse(ctx, conn, neg, opt)
	if err != nil { // the library closes the channels only when it finishes
		close(neg.Haves)
		close(neg.HaveNots)
	}
	wg.Wait()
	return here, there, rounds, err
}

// converse exchanges messages until the client has nothing more to say.
func converse(ctx context.Context, conn *relayclient.Conn, neg *negentropy.Negentropy, opt Options) (int, error) {
	s, err := conn.NegOpen(ctx, opt.Filter, neg.Start())
	if err != nil {
		return 0, err
	}
	defer s.Close(context.WithoutCancel(ctx))
	for rounds := 1; ; rounds++ {
		msg, err := next(ctx, s, opt.Answer, rounds == 1)
		if err != nil {
			return rounds, err
		}
		out, err := neg.Reconcile(msg)
		if err != nil {
			return rounds, fmt.Errorf("negsync: reconcile: %w", err)
		}
		if out == "" {
			return rounds, nil
		}
		if err := s.Send(ctx, out); err != nil {
			return rounds, err
		}
	}
}

// next waits for the relay's answer; silence (or an "unknown" refusal) to
// the first message means the relay does not speak NIP-77.
func next(ctx context.Context, s *relayclient.NegSession, wait time.Duration, first bool) (string, error) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	msg, err := s.Next(wctx)
	var negErr *relayclient.NegError
	switch {
	case first && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return "", fmt.Errorf("%w: no answer to NEG-OPEN within %s", ErrUnsupported, wait)
	case first && errors.As(err, &negErr) && strings.Contains(negErr.Reason, "not support"):
		return "", fmt.Errorf("%w: %s", ErrUnsupported, negErr.Reason)
	}
	return msg, err
}
