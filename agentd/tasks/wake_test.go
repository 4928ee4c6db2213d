package tasks_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/tasks"
)

// TestStore_Wake: a change made through another Store wakes no Wait by
// itself (no Poll); Wake makes it look again.
func TestStore_Wake(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "tasks.db")
	c := newClock()
	a, b := open(t, path, c), open(t, path, c)
	if _, err := a.Create(ctx, tasks.Task{ID: "t1"}); err != nil {
		t.Fatal(err)
	}
	got := make(chan tasks.Task, 1)
	go func() { tk, _ := a.Wait(ctx, "t1"); got <- tk }()
	if _, err := b.Transition(ctx, "t1", tasks.StatusFailed, nil); err != nil {
		t.Fatal(err)
	}
	a.Wake()
	if tk := <-got; tk.Status != tasks.StatusFailed {
		t.Fatalf("Wait returned %+v", tk)
	}
}
