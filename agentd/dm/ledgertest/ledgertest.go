// Package ledgertest is the conformance suite of dm.Ledger: the JSON file
// (dm's own tests) and agentd/agentpg run it.
//
//	ledgertest.Run(t, func(t *testing.T) ledgertest.Open {
//		path := filepath.Join(t.TempDir(), "state.json")
//		return func(w time.Duration) dm.Ledger { l, _ := dm.OpenFileLedger(path, w); return l }
//	})
package ledgertest

import (
	"errors"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/dm"
)

// Open returns a new handle (a restart, or the instance taking over) on
// one backing, with catch-up window w.
type Open func(w time.Duration) dm.Ledger

// Fresh makes an empty backing and returns how to open handles on it.
type Fresh func(t *testing.T) Open

const window = time.Hour

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// Run runs the suite.
func Run(t *testing.T, fresh Fresh) {
	t.Run("Empty", func(t *testing.T) { empty(t, fresh(t)) })
	t.Run("BeginMarkDurable", func(t *testing.T) { beginMark(t, fresh(t)) })
	t.Run("AnsweredOnce", func(t *testing.T) { answeredOnce(t, fresh(t)) })
	t.Run("ForgetsPastWindow", func(t *testing.T) { forgets(t, fresh(t)) })
}

// event returns a signed event created at.
func event(t *testing.T, kind int, at time.Time) *nostr.Event {
	t.Helper()
	evt := &nostr.Event{Kind: kind, CreatedAt: nostr.Timestamp(at.Unix()), Tags: nostr.Tags{{"p", "x"}}, Content: "c"}
	if err := evt.Sign(nostr.GeneratePrivateKey()); err != nil {
		t.Fatal(err)
	}
	return evt
}

func empty(t *testing.T, open Open) {
	l := open(window)
	if l.Has("00") {
		t.Error("Has on an empty ledger")
	}
	if got, want := l.Since(t0), nostr.Timestamp(t0.Add(-window).Unix()); got != want {
		t.Errorf("Since = %d, want %d (now - window)", got, want)
	}
	if p := l.Pending(); len(p) != 0 {
		t.Errorf("Pending = %v", p)
	}
}

func beginMark(t *testing.T, open Open) {
	l := open(window)
	wrap := event(t, 1059, t0)
	reply := []*nostr.Event{event(t, 1059, t0), event(t, 1059, t0)}
	if err := l.Begin(t.Context(), wrap, reply); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]dm.Ledger{"same": l, "reopened": open(window)} {
		if !h.Has(wrap.ID) {
			t.Errorf("%s: Has after Begin = false", name)
		}
		p, ok := h.Pending()[wrap.ID]
		if !ok || p.At != int64(wrap.CreatedAt) || len(p.Wraps) != 2 || p.Wraps[0].ID != reply[0].ID || p.Wraps[1].Sig != reply[1].Sig {
			t.Errorf("%s: Pending = %+v", name, p)
		}
	}
	now := t0.Add(time.Minute)
	if err := l.Mark(t.Context(), wrap.ID, wrap.CreatedAt, now); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]dm.Ledger{"same": l, "reopened": open(window)} {
		if !h.Has(wrap.ID) {
			t.Errorf("%s: Has after Mark = false", name)
		}
		if p := h.Pending(); len(p) != 0 {
			t.Errorf("%s: Pending after Mark = %v", name, p)
		}
		if got, want := h.Since(now.Add(time.Hour)), nostr.Timestamp(now.Add(-window).Unix()); got != want {
			t.Errorf("%s: Since = %d, want %d (watermark - window)", name, got, want)
		}
	}
}

func forgets(t *testing.T, open Open) {
	l := open(window)
	old, recent := event(t, 1059, t0), event(t, 1059, t0.Add(2*window))
	if err := l.Mark(t.Context(), old.ID, old.CreatedAt, t0); err != nil {
		t.Fatal(err)
	}
	if err := l.Mark(t.Context(), recent.ID, recent.CreatedAt, t0.Add(2*window)); err != nil {
		t.Fatal(err)
	}
	h := open(window)
	if h.Has(old.ID) {
		t.Error("an id older than the window is still remembered")
	}
	if !h.Has(recent.ID) {
		t.Error("a recent id is forgotten")
	}
}

// answeredOnce: a wrap marked done by one handle (instance) cannot be
// begun again by another opened after it.
func answeredOnce(t *testing.T, open Open) {
	a := open(window)
	wrap := event(t, 1059, t0)
	if err := a.Mark(t.Context(), wrap.ID, wrap.CreatedAt, t0); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]dm.Ledger{"same": a, "other": open(window)} {
		if err := h.Begin(t.Context(), wrap, []*nostr.Event{event(t, 1059, t0)}); !errors.Is(err, dm.ErrAnswered) {
			t.Errorf("%s: Begin after Mark: %v, want ErrAnswered", name, err)
		}
	}
}
