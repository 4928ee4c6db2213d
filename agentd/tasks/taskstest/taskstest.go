// Package taskstest is the conformance suite of tasks.Backend, run through
// a tasks.Store as the daemon uses it: the SQLite file and agentd/agentpg
// run it from their own tests. Two handles on one backing stand for two
// instances (or a restart).
//
//	taskstest.Run(t, func(t *testing.T) taskstest.Open {
//		path := filepath.Join(t.TempDir(), "tasks.db")
//		return func() tasks.Backend { b, _ := tasks.OpenSQLite(ctx, path); return b }
//	})
package taskstest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/internal/testkit"
)

// Open returns a new handle on one backing.
type Open func() tasks.Backend

// Fresh makes an empty backing and returns how to open handles on it.
type Fresh = testkit.Fresh[Open]

// Run runs the suite.
func Run(t *testing.T, fresh Fresh) {
	testkit.RunSuite(t, fresh,
		testkit.Case[Open]{Name: "CreateGet", Test: createGet},
		testkit.Case[Open]{Name: "Transitions", Test: transitions},
		testkit.Case[Open]{Name: "ConcurrentTransition", Test: concurrentTransition},
		testkit.Case[Open]{Name: "ListActive", Test: listActive},
		testkit.Case[Open]{Name: "Deadlines", Test: deadlines},
		testkit.Case[Open]{Name: "WaitOtherHandle", Test: waitOther},
	)
}

func newClock() *testkit.Clock { return testkit.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) }

func store(t *testing.T, open Open, c *testkit.Clock) *tasks.Store {
	t.Helper()
	st, err := tasks.Open(context.Background(), tasks.Config{Backend: open(), Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func createGet(t *testing.T, open Open) {
	ctx := context.Background()
	c := newClock()
	a, b := store(t, open, c), store(t, open, c)
	in := tasks.Task{ID: "t1", Type: "analysis", Source: "src", Payload: []byte(`{"q":1}`),
		Requirements: tasks.Requirements{Capabilities: []string{"x"}, Constraints: tasks.Constraints{Priority: 2, MaxTokens: 9}}}
	made, err := a.Create(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Get(ctx, "t1")
	if err != nil || fmt.Sprint(got) != fmt.Sprint(made) {
		t.Fatalf("Get on the other handle = %+v, %v\nwant %+v", got, err, made)
	}
	if _, err := b.Create(ctx, in); !errors.Is(err, tasks.ErrExists) {
		t.Errorf("second Create: %v, want ErrExists", err)
	}
	if _, err := b.Get(ctx, "nope"); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("Get(nope): %v, want ErrNotFound", err)
	}
}

func transitions(t *testing.T, open Open) {
	ctx := context.Background()
	c := newClock()
	a, b := store(t, open, c), store(t, open, c)
	a.Create(ctx, tasks.Task{ID: "t1"})
	if _, err := a.Transition(ctx, "t1", tasks.StatusAssigned, func(t *tasks.Task) { t.Assignee = "ag" }); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	if _, err := b.Transition(ctx, "t1", tasks.StatusRunning, nil); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	done, err := a.Transition(ctx, "t1", tasks.StatusDone, func(t *tasks.Task) { t.Result = []byte(`"ok"`) })
	if err != nil {
		t.Fatal(err)
	}
	if done.Assignee != "ag" || done.Duration() != time.Second || string(done.Result) != `"ok"` {
		t.Errorf("done task: %+v", done)
	}
	if _, err := b.Transition(ctx, "t1", tasks.StatusRunning, nil); !errors.Is(err, tasks.ErrBadTransition) {
		t.Errorf("done -> running: %v, want ErrBadTransition", err)
	}
	if _, err := b.Edit(ctx, "t1", func(t *tasks.Task) {}); !errors.Is(err, tasks.ErrBadTransition) {
		t.Errorf("Edit of a final task: %v, want ErrBadTransition", err)
	}
	if got, _ := b.Get(ctx, "t1"); got.Status != tasks.StatusDone || fmt.Sprint(got) != fmt.Sprint(done) {
		t.Errorf("read back: %+v", got)
	}
}

// concurrentTransition: instances racing to assign one task: one wins.
func concurrentTransition(t *testing.T, open Open) {
	ctx := context.Background()
	c := newClock()
	const n = 6
	sts := make([]*tasks.Store, n)
	for i := range sts {
		sts[i] = store(t, open, c)
	}
	sts[0].Create(ctx, tasks.Task{ID: "t1"})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, st := range sts {
		wg.Go(func() {
			_, errs[i] = st.Transition(ctx, "t1", tasks.StatusAssigned, func(t *tasks.Task) { t.Assignee = fmt.Sprint("ag", i) })
		})
	}
	wg.Wait()
	testkit.OneWinner(t, errs, tasks.ErrBadTransition)
}

func listActive(t *testing.T, open Open) {
	ctx := context.Background()
	c := newClock()
	a := store(t, open, c)
	for i, p := range []int{0, 5, 0, 5} {
		a.Create(ctx, tasks.Task{ID: fmt.Sprint("t", i), Requirements: tasks.Requirements{Constraints: tasks.Constraints{Priority: p}}})
		c.Advance(time.Millisecond)
	}
	a.Transition(ctx, "t0", tasks.StatusAssigned, func(t *tasks.Task) { t.Assignee = "x" })
	a.Transition(ctx, "t2", tasks.StatusAssigned, func(t *tasks.Task) { t.Assignee = "x" })
	a.Transition(ctx, "t3", tasks.StatusAssigned, func(t *tasks.Task) { t.Assignee = "y" })
	a.Transition(ctx, "t3", tasks.StatusFailed, nil)
	b := store(t, open, c)
	for _, tc := range []struct {
		f    tasks.Filter
		want string
	}{
		{tasks.Filter{}, "t1 t3 t0 t2"},
		{tasks.Filter{Status: []tasks.Status{tasks.StatusAssigned, tasks.StatusFailed}}, "t3 t0 t2"},
		{tasks.Filter{Assignee: "x"}, "t0 t2"},
		{tasks.Filter{Limit: 2}, "t1 t3"},
	} {
		list, err := b.List(ctx, tc.f)
		var ids []string
		for _, x := range list {
			ids = append(ids, x.ID)
		}
		if got := strings.Join(ids, " "); err != nil || got != tc.want {
			t.Errorf("List(%+v) = %q, %v; want %q", tc.f, got, err, tc.want)
		}
	}
	active, err := b.Active(ctx)
	if err != nil || fmt.Sprint(active) != "map[x:2]" {
		t.Errorf("Active = %v, %v; want map[x:2]", active, err)
	}
}

func deadlines(t *testing.T, open Open) {
	ctx := context.Background()
	c := newClock()
	a, b := store(t, open, c), store(t, open, c)
	dl := tasks.Requirements{Constraints: tasks.Constraints{Deadline: c.Now().Add(time.Minute)}}
	a.Create(ctx, tasks.Task{ID: "soon", Requirements: dl})
	a.Create(ctx, tasks.Task{ID: "never"})
	if n, err := b.ExpireDue(ctx); err != nil || n != 0 {
		t.Fatalf("ExpireDue before = %d, %v", n, err)
	}
	c.Advance(time.Minute)
	if n, err := b.ExpireDue(ctx); err != nil || n != 1 {
		t.Fatalf("ExpireDue after = %d, %v; want 1", n, err)
	}
	if got, _ := a.Get(ctx, "soon"); got.Status != tasks.StatusExpired {
		t.Errorf("soon is %s, want expired", got.Status)
	}
	if _, err := a.Create(ctx, tasks.Task{ID: "late", Requirements: dl}); !errors.Is(err, tasks.ErrDeadlinePassed) {
		t.Errorf("Create past deadline: %v", err)
	}
}

// waitOther: Wait on one handle sees the task finished through another
// (with Config.Poll, as the daemon sets it on a shared backend).
func waitOther(t *testing.T, open Open) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := newClock()
	a, err := tasks.Open(ctx, tasks.Config{Backend: open(), Now: c.Now, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := store(t, open, c)
	a.Create(ctx, tasks.Task{ID: "t1"})
	got := make(chan error, 1)
	go func() {
		tk, err := a.Wait(ctx, "t1")
		if err == nil && tk.Status != tasks.StatusFailed {
			err = fmt.Errorf("wait returned status %s", tk.Status)
		}
		got <- err
	}()
	if _, err := b.Transition(ctx, "t1", tasks.StatusFailed, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}
