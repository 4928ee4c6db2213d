package replicate

import (
	"context"
	"slices"
	"testing"
)

// gatedDirectory answers from its current list; while gate is set, each
// answer waits for it (so a test can change the list mid-answer).
type gatedDirectory struct {
	agents  []string
	entered chan struct{}
	gate    chan struct{}
	calls   int
}

func (g *gatedDirectory) Agents(context.Context, string) ([]string, error) {
	g.calls++
	answer := slices.Clone(g.agents)
	if g.gate != nil {
		g.entered <- struct{}{}
		<-g.gate
	}
	return answer, nil
}

// An answer computed before an Invalidate (it read the directory before
// the owner's claims named a new agent) is returned to its caller but not
// cached: the next call asks again and sees the new agent.
func TestCachedDirectory_InvalidateDuringAnAnswer(t *testing.T) {
	next := &gatedDirectory{agents: []string{"a"}, entered: make(chan struct{}), gate: make(chan struct{})}
	d := NewCachedDirectory(next, 1<<62, nil) // never expires by age
	stale := make(chan []string)
	go func() {
		got, _ := d.Agents(context.Background(), "owner")
		stale <- got
	}()
	<-next.entered // the answer ["a"] is computed…
	next.agents = []string{"a", "b"}
	d.Invalidate() // …and the claims naming b are stored meanwhile
	close(next.gate)
	if got := <-stale; !slices.Equal(got, []string{"a"}) {
		t.Fatalf("first answer = %v, want [a]", got)
	}
	next.gate = nil
	got, err := d.Agents(context.Background(), "owner")
	if err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after Invalidate: %v, %v; want [a b] (the stale answer was cached)", got, err)
	}
	if next.calls != 2 {
		t.Fatalf("next asked %d times, want 2", next.calls)
	}
	if got, _ := d.Agents(context.Background(), "owner"); !slices.Equal(got, []string{"a", "b"}) || next.calls != 2 {
		t.Fatalf("a fresh answer is cached: got %v after %d calls", got, next.calls)
	}
}
