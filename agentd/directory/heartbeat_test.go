package directory_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/nbd-wtf/go-nostr"
)

func TestDirectory_HeartbeatsDecideAvailability(t *testing.T) {
	rel, clk := testrelay.Open(t), newClock()
	d := startDir(t, rel, clk, directory.Config{HeartbeatTTL: 90 * time.Second})
	a, b := testkit.NewKey(t), testkit.NewKey(t)
	status := map[string]directory.Status{
		a.PK: {Capacity: 4, Load: 1, Capabilities: []string{"code.review"}},
		b.PK: {Capacity: 2, Capabilities: []string{"code.review"}},
	}
	keys := map[string]string{a.PK: a.SK, b.PK: b.SK}
	hb := directory.NewHeartbeater(directory.HeartbeaterConfig{
		Agents:  func() []string { return []string{a.PK, b.PK} },
		Keys:    func(_ context.Context, pk string) (string, error) { return keys[pk], nil },
		Status:  func(pk string) directory.Status { return status[pk] },
		Publish: rel.Publish, Now: clk.Now, Logger: quiet,
	})
	if err := hb.Beat(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := agentWhere(t, d, a.PK, "a available", func(x directory.Agent) bool { return x.Available })
	if got.Status != "active" || got.Load != 1 || got.Capacity != 4 || !slices.Equal(got.Capabilities, []string{"code.review"}) {
		t.Errorf("a = %+v", got)
	}
	if got.LastHeartbeat.Unix() != clk.Now().Unix() {
		t.Errorf("last heartbeat %v, want %v", got.LastHeartbeat, clk.Now())
	}
	agentWhere(t, d, b.PK, "b available", func(x directory.Agent) bool { return x.Available })
	if hits := d.Search(directory.Query{Capabilities: []string{"code.review"}}); len(hits) != 2 {
		t.Fatalf("search before silence: %v", ids(hits))
	}

	// b keeps beating, a falls silent: past the TTL a is unavailable and out of the ranking.
	clk.Advance(60 * time.Second)
	beat(t, rel, b, clk.Now(), status[b.PK])
	clk.Advance(31 * time.Second)
	agentWhere(t, d, b.PK, "b's second heartbeat", func(x directory.Agent) bool { return x.LastHeartbeat.Equal(clk.Now().Add(-31 * time.Second)) })
	if x, _ := d.Get(a.PK); x.Available {
		t.Errorf("a still available %s after its last heartbeat", 91*time.Second)
	}
	if hits := d.Search(directory.Query{Capabilities: []string{"code.review"}}); !slices.Equal(ids(hits), []string{b.PK}) {
		t.Errorf("search after a's silence = %v, want only b", ids(hits))
	}
	all := d.Search(directory.Query{Capabilities: []string{"code.review"}, IncludeUnavailable: true})
	if !slices.Equal(ids(all), []string{b.PK, a.PK}) || all[1].Available {
		t.Errorf("with unavailable: %v, want b then a (unavailable)", ids(all))
	}

	// a comes back; then both leave cleanly with offline heartbeats.
	if err := hb.Beat(context.Background()); err != nil {
		t.Fatal(err)
	}
	agentWhere(t, d, a.PK, "a back", func(x directory.Agent) bool { return x.Available })
	clk.Advance(time.Second)
	if err := hb.Offline(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, k := range []key{a, b} {
		agentWhere(t, d, k.PK, "offline", func(x directory.Agent) bool { return !x.Available && x.Status == "offline" })
	}
	if hits := d.Search(directory.Query{}); len(hits) != 0 {
		t.Errorf("search after both left: %v", ids(hits))
	}
}

func TestDirectory_HeartbeatExpirationEndsAvailability(t *testing.T) {
	rel, clk := testrelay.Open(t), newClock()
	d := startDir(t, rel, clk, directory.Config{HeartbeatTTL: time.Hour})
	a := testkit.NewKey(t)
	evt, err := directory.BuildHeartbeat(a.SK, directory.Status{}, clk.Now(), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := rel.Publish(context.Background(), evt); err != nil {
		t.Fatal(err)
	}
	agentWhere(t, d, a.PK, "available", func(x directory.Agent) bool { return x.Available })
	clk.Advance(30 * time.Second)
	if x, _ := d.Get(a.PK); x.Available {
		t.Error("available at its heartbeat's NIP-40 expiration, though the TTL is longer")
	}
}

func TestHeartbeater_RunBeatsOnItsInterval(t *testing.T) {
	rel, clk := testrelay.Open(t), newClock()
	d := startDir(t, rel, clk, directory.Config{})
	a := testkit.NewKey(t)
	var published atomic.Int32
	hb := directory.NewHeartbeater(directory.HeartbeaterConfig{
		Interval: 5 * time.Millisecond,
		Agents:   func() []string { return []string{a.PK} },
		Keys:     func(context.Context, string) (string, error) { return a.SK, nil },
		Status:   func(string) directory.Status { return directory.Status{Status: events.StatusBusy} },
		Publish: func(ctx context.Context, evt *nostr.Event) error {
			published.Add(1)
			return rel.Publish(ctx, evt)
		},
		Now: clk.Now, Logger: quiet,
	})
	stop := testkit.Run(t, "heartbeater", hb.Run, nil)
	testkit.WaitFor(t, within, "three rounds", func() bool { return published.Load() >= 3 })
	stop()
	n := published.Load()
	agentWhere(t, d, a.PK, "busy agent listed", func(x directory.Agent) bool { return x.Status == "busy" && x.Available })
	if published.Load() != n {
		t.Error("published after Run returned")
	}
}

func TestHeartbeater_RefusesAKeyOfAnotherAgent(t *testing.T) {
	a, b := testkit.NewKey(t), testkit.NewKey(t)
	hb := directory.NewHeartbeater(directory.HeartbeaterConfig{
		Agents:  func() []string { return []string{a.PK} },
		Keys:    func(context.Context, string) (string, error) { return b.SK, nil },
		Status:  func(string) directory.Status { return directory.Status{} },
		Publish: func(context.Context, *nostr.Event) error { t.Error("published"); return nil },
	})
	if err := hb.Beat(context.Background()); err == nil {
		t.Error("a heartbeat signed with another agent's key was accepted")
	}
}

// Beats in the same second (a beat after an install, then the offline one
// at shutdown) get increasing created_at, so the later one replaces the
// earlier instead of losing the NIP-01 id tie.
func TestHeartbeater_SameSecondBeatsIncrease(t *testing.T) {
	a := testkit.NewKey(t)
	at := time.Unix(1_800_000_000, 0)
	var got []*nostr.Event
	h := directory.NewHeartbeater(directory.HeartbeaterConfig{
		Agents: func() []string { return []string{a.PK} },
		Keys:   func(context.Context, string) (string, error) { return a.SK, nil },
		Status: func(string) directory.Status { return directory.Status{Capacity: 1} },
		Publish: func(_ context.Context, evt *nostr.Event) error {
			got = append(got, evt)
			return nil
		},
		Now: func() time.Time { return at },
	})
	ctx := context.Background()
	if err := h.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Offline(ctx); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("published %d heartbeats, want 3", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].CreatedAt <= got[i-1].CreatedAt {
			t.Fatalf("heartbeat %d created_at %d, not after %d", i, got[i].CreatedAt, got[i-1].CreatedAt)
		}
	}
	if hb, err := events.ParseHeartbeat(got[2]); err != nil || hb.Status != events.StatusOffline {
		t.Fatalf("last heartbeat = %+v, %v; want offline", hb, err)
	}
}

// Run beats at once and then every Interval, on the clock: in a synctest
// bubble a day of heartbeats takes no time, and the count is exact.
func TestHeartbeater_RunBeatsEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := testkit.NewKey(t)
		var published atomic.Int32
		hb := directory.NewHeartbeater(directory.HeartbeaterConfig{
			Interval: time.Minute,
			Agents:   func() []string { return []string{a.PK} },
			Keys:     func(context.Context, string) (string, error) { return a.SK, nil },
			Status:   func(string) directory.Status { return directory.Status{Status: events.StatusActive} },
			Publish:  func(context.Context, *nostr.Event) error { published.Add(1); return nil },
			Logger:   quiet,
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- hb.Run(ctx) }()
		synctest.Wait()
		if got := published.Load(); got != 1 {
			t.Fatalf("%d heartbeats at start, want 1", got)
		}
		time.Sleep(24*time.Hour + time.Second)
		synctest.Wait()
		if got, want := published.Load(), int32(1+24*60); got != want {
			t.Errorf("%d heartbeats after a day, want %d", got, want)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v after its stop, want nil", err)
		}
	})
}
