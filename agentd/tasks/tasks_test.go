package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/internal/testkit"
)

// clock is an injected clock the test moves by hand.
type clock = testkit.Clock

func open(t *testing.T, path string, c *clock) *tasks.Store {
	t.Helper()
	st, err := tasks.Open(context.Background(), tasks.Config{Path: path, Now: c.Now, Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newClock() *clock { return testkit.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) }

func TestStore_PersistsAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tasks.db")
	c := newClock()
	st := open(t, path, c)
	req := tasks.Requirements{Capabilities: []string{"analysis"}, Constraints: tasks.Constraints{Deadline: c.Now().Add(time.Hour), Priority: 2, MaxTokens: 500}}
	created, err := st.Create(ctx, tasks.Task{Type: "analysis", Requirements: req, Payload: json.RawMessage(`{"text":"hi"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Transition(ctx, created.ID, tasks.StatusAssigned, func(tk *tasks.Task) { tk.Assignee = "agentB" }); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st2 := open(t, path, c)
	got, err := st2.Get(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != tasks.StatusAssigned || got.Assignee != "agentB" || got.Requirements.Constraints.MaxTokens != 500 ||
		!got.Requirements.Constraints.Deadline.Equal(req.Constraints.Deadline) || string(got.Payload) != `{"text":"hi"}` {
		t.Fatalf("reopened task = %+v", got)
	}
	active, err := st2.Active(ctx)
	if err != nil || active["agentB"] != 1 {
		t.Fatalf("Active = %v, %v; want agentB:1", active, err)
	}
}

func TestStore_Transitions(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	st := open(t, filepath.Join(t.TempDir(), "t.db"), c)
	tk, err := st.Create(ctx, tasks.Task{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Transition(ctx, tk.ID, tasks.StatusDone, nil); !errors.Is(err, tasks.ErrBadTransition) {
		t.Fatalf("pending -> done: err = %v, want ErrBadTransition", err)
	}
	for _, to := range []tasks.Status{tasks.StatusAssigned, tasks.StatusRunning} {
		if _, err := st.Transition(ctx, tk.ID, to, nil); err != nil {
			t.Fatalf("-> %s: %v", to, err)
		}
	}
	c.Advance(2 * time.Second)
	done, err := st.Transition(ctx, tk.ID, tasks.StatusDone, func(tk *tasks.Task) { tk.Result = json.RawMessage(`"ok"`) })
	if err != nil {
		t.Fatal(err)
	}
	if done.Duration() != 2*time.Second {
		t.Fatalf("duration = %v, want 2s", done.Duration())
	}
	if _, err := st.Transition(ctx, tk.ID, tasks.StatusFailed, nil); !errors.Is(err, tasks.ErrBadTransition) {
		t.Fatalf("done -> failed: err = %v, want ErrBadTransition", err)
	}
	if _, err := st.Get(ctx, "nope"); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("Get(nope) = %v, want ErrNotFound", err)
	}
	stats, err := st.Stats(ctx, "")
	if err != nil || stats.Done != 1 || stats.AverageExecutionTime != 2 {
		t.Fatalf("Stats = %+v, %v", stats, err)
	}
}

func TestStore_DeadlineExpiry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := newClock()
	st := open(t, filepath.Join(t.TempDir(), "t.db"), c)
	if _, err := st.Create(ctx, tasks.Task{Requirements: tasks.Requirements{Constraints: tasks.Constraints{Deadline: c.Now().Add(-time.Second)}}}); !errors.Is(err, tasks.ErrDeadlinePassed) {
		t.Fatalf("create overdue: err = %v, want ErrDeadlinePassed", err)
	}
	soon, err := st.Create(ctx, tasks.Task{Requirements: tasks.Requirements{Constraints: tasks.Constraints{Deadline: c.Now().Add(time.Minute)}}})
	if err != nil {
		t.Fatal(err)
	}
	never, err := st.Create(ctx, tasks.Task{})
	if err != nil {
		t.Fatal(err)
	}
	testkit.Run(t, "deadline sweep", st.Run, nil)
	waitCtx, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	if got, err := st.Wait(waitCtx, soon.ID); !errors.Is(err, context.DeadlineExceeded) || got.Status != tasks.StatusPending {
		t.Fatalf("before the deadline: %s, %v; want still pending", got.Status, err)
	}
	stop()
	c.Advance(time.Minute)
	got, err := st.Wait(ctx, soon.ID) // the goroutine expires it
	if err != nil || got.Status != tasks.StatusExpired {
		t.Fatalf("after the deadline: %+v, %v; want expired", got, err)
	}
	if _, err := st.Transition(ctx, soon.ID, tasks.StatusRunning, nil); !errors.Is(err, tasks.ErrBadTransition) {
		t.Fatalf("expired -> running: %v", err)
	}
	if n, _ := st.Get(ctx, never.ID); n.Status != tasks.StatusPending {
		t.Fatalf("task without deadline = %s, want pending", n.Status)
	}
}

func TestStore_ListOrder(t *testing.T) {
	ctx := context.Background()
	st := open(t, filepath.Join(t.TempDir(), "t.db"), newClock())
	for i, p := range []int{1, 3, 2} {
		if _, err := st.Create(ctx, tasks.Task{ID: string(rune('a' + i)), Requirements: tasks.Requirements{Constraints: tasks.Constraints{Priority: p}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Transition(ctx, "a", tasks.StatusFailed, nil); err != nil {
		t.Fatal(err)
	}
	all, _ := st.List(ctx, tasks.Filter{})
	pending, _ := st.List(ctx, tasks.Filter{Status: []tasks.Status{tasks.StatusPending}})
	if ids(all) != "bca" || ids(pending) != "bc" {
		t.Fatalf("List = %s, pending = %s; want bca, bc", ids(all), ids(pending))
	}
}

func ids(ts []tasks.Task) string {
	s := ""
	for _, t := range ts {
		s += t.ID
	}
	return s
}

func TestPick(t *testing.T) {
	cands := []tasks.Candidate{
		{ID: "best", Quality: 9, Load: 0, Capacity: 2},
		{ID: "ok", Quality: 8, Load: 0, Capacity: 4},
		{ID: "full", Quality: 10, Load: 3, Capacity: 3},
	}
	for _, tc := range []struct {
		name   string
		active map[string]int
		want   string
	}{
		{"idle", nil, "best"},
		{"best half busy here", map[string]int{"best": 1}, "ok"},
		{"best full here", map[string]int{"best": 2}, "ok"},
	} {
		got, ok := tasks.Pick(cands, tc.active)
		if !ok || got.ID != tc.want {
			t.Errorf("%s: Pick = %q, %v; want %q", tc.name, got.ID, ok, tc.want)
		}
	}
	if _, ok := tasks.Pick(cands[2:], nil); ok {
		t.Error("Pick among full agents succeeded")
	}
}
