// Package consenttest is the conformance suite of consent.Backend, run
// through a consent.Consent as the daemon uses it: the SQLite file and
// agentd/agentpg run it from their own tests. Two handles on one backing
// stand for two instances.
//
//	consenttest.Run(t, func(t *testing.T) consenttest.Open {
//		path := filepath.Join(t.TempDir(), "consent.db")
//		return func() consent.Backend { b, _ := consent.OpenSQLite(ctx, path); return b }
//	})
package consenttest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/internal/testkit"
)

// Open returns a new handle on one backing.
type Open func() consent.Backend

// Fresh makes an empty backing and returns how to open handles on it.
type Fresh = testkit.Fresh[Open]

// Run runs the suite.
func Run(t *testing.T, fresh Fresh) {
	testkit.RunSuite(t, fresh,
		testkit.Case[Open]{Name: "AskGetList", Test: askGetList},
		testkit.Case[Open]{Name: "Decide", Test: decide},
		testkit.Case[Open]{Name: "ConcurrentDecide", Test: concurrentDecide},
		testkit.Case[Open]{Name: "Revoke", Test: revoke},
		testkit.Case[Open]{Name: "WaitOtherHandle", Test: waitOther},
	)
}

var policy = consent.Policy{Require: []string{consent.OpDelegateRemote}}

func open(t *testing.T, o Open, c *testkit.Clock, poll time.Duration) *consent.Consent {
	t.Helper()
	cs, err := consent.Open(context.Background(), consent.Config{Backend: o(), Policy: policy, Now: c.Now, Poll: poll, Refresh: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func newClock() *testkit.Clock { return testkit.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) }

func pubkey() string {
	pk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	return pk
}

func req() consent.Request {
	return consent.Request{Op: consent.OpDelegateRemote, Agent: pubkey(), Target: pubkey(), Summary: "s"}
}

func askGetList(t *testing.T, o Open) {
	ctx := context.Background()
	c := newClock()
	a, b := open(t, o, c, 0), open(t, o, c, 0)
	var ids []string
	for range 4 { // one millisecond: asking order must hold
		ap, err := a.Ask(ctx, req())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ap.ID)
	}
	got, err := b.Get(ctx, ids[2])
	if err != nil || got.ID != ids[2] || got.Status != consent.StatusPending || !got.Created.Equal(c.Now()) {
		t.Errorf("Get = %+v, %v", got, err)
	}
	if _, err := b.Get(ctx, "nope"); !errors.Is(err, consent.ErrNotFound) {
		t.Errorf("Get(nope): %v, want ErrNotFound", err)
	}
	b.Approve(ctx, ids[1])
	for _, tc := range []struct {
		status consent.Status
		want   []string
	}{{"", ids}, {consent.StatusPending, []string{ids[0], ids[2], ids[3]}}, {consent.StatusApproved, ids[1:2]}} {
		list, err := a.List(ctx, tc.status)
		var gotIDs []string
		for _, x := range list {
			gotIDs = append(gotIDs, x.ID)
		}
		if err != nil || strings.Join(gotIDs, " ") != strings.Join(tc.want, " ") {
			t.Errorf("List(%q) = %v, %v; want %v", tc.status, gotIDs, err, tc.want)
		}
	}
}

func decide(t *testing.T, o Open) {
	ctx := context.Background()
	c := newClock()
	a, b := open(t, o, c, 0), open(t, o, c, 0)
	r := req()
	var pe *consent.PendingError
	if err := a.Check(ctx, r, ""); !errors.As(err, &pe) {
		t.Fatalf("Check: %v, want a PendingError", err)
	}
	if _, err := b.Approve(ctx, pe.Approval.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.Check(ctx, r, pe.Approval.ID); err != nil {
		t.Errorf("Check after approval through the other handle: %v", err)
	}
	if _, err := a.Deny(ctx, pe.Approval.ID, "no"); !errors.Is(err, consent.ErrDecided) {
		t.Errorf("Deny after Approve: %v, want ErrDecided", err)
	}
	other := r
	other.Target = pubkey()
	if err := a.Check(ctx, other, pe.Approval.ID); !errors.Is(err, consent.ErrMismatch) {
		t.Errorf("Check of another target: %v, want ErrMismatch", err)
	}
	ap, _ := a.Ask(ctx, req())
	if d, err := b.Deny(ctx, ap.ID, "why"); err != nil || d.Reason != "why" || d.Decided.IsZero() {
		t.Errorf("Deny = %+v, %v", d, err)
	}
}

// concurrentDecide: an approve and a deny racing through two instances:
// exactly one decides.
func concurrentDecide(t *testing.T, o Open) {
	ctx := context.Background()
	c := newClock()
	const n = 6
	cs := make([]*consent.Consent, n)
	for i := range cs {
		cs[i] = open(t, o, c, 0)
	}
	ap, _ := cs[0].Ask(ctx, req())
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, x := range cs {
		wg.Go(func() {
			if i%2 == 0 {
				_, errs[i] = x.Approve(ctx, ap.ID)
			} else {
				_, errs[i] = x.Deny(ctx, ap.ID, fmt.Sprint(i))
			}
		})
	}
	wg.Wait()
	testkit.OneWinner(t, errs, consent.ErrDecided)
}

func revoke(t *testing.T, o Open) {
	ctx := context.Background()
	c := newClock()
	a, b := open(t, o, c, 0), open(t, o, c, 0)
	x, y := pubkey(), pubkey()
	if _, err := a.Revoke(ctx, x, "r1"); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	a.Revoke(ctx, y, "")
	a.Revoke(ctx, x, "r2") // a new reason and time
	if !b.Revoked(t.Context(), x) {
		t.Error("b does not see the revocation made through a (after Refresh)")
	}
	list, err := b.RevokedList(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("RevokedList = %+v, %v", list, err)
	}
	for _, r := range list {
		if r.Agent == x && r.Reason != "r2" {
			t.Errorf("x's reason %q, want r2", r.Reason)
		}
	}
	if was, err := b.Unrevoke(ctx, x); err != nil || !was {
		t.Errorf("Unrevoke = %v, %v", was, err)
	}
	if was, _ := b.Unrevoke(ctx, x); was {
		t.Error("second Unrevoke reports a revocation")
	}
	c.Advance(time.Second)
	if a.Revoked(t.Context(), x) || !a.Revoked(t.Context(), y) {
		t.Errorf("a after b's unrevoke: x %v (want false), y %v (want true)", a.Revoked(t.Context(), x), a.Revoked(t.Context(), y))
	}
}

func waitOther(t *testing.T, o Open) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := newClock()
	a, b := open(t, o, c, 10*time.Millisecond), open(t, o, c, 0)
	ap, _ := a.Ask(ctx, req())
	got := make(chan error, 1)
	go func() { got <- a.Wait(ctx, ap.ID) }()
	if _, err := b.Approve(ctx, ap.ID); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Wait: %v, want nil (approved)", err)
	}
}
