package dm_test

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// TestService_TakeOver: a DM to an agent this instance did not run yet is
// left alone; once the agent is taken over, TakeOver answers it.
func TestService_TakeOver(t *testing.T) {
	n := newNode(t)
	local := n.addAgent()
	later := n.addAgent() // has a key here, but runs elsewhere until taken over
	var mu sync.Mutex
	running := []string{local.pk}
	cfg := n.config()
	cfg.Agents = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(running)
	}
	svc := n.startService(cfg)
	carol := n.person()

	toLater := carol.send(later.pk, "are you there?")
	toLocal := carol.send(local.pk, "hi")
	carol.replyTo(toLocal.ID) // MaxConcurrent 1: the earlier wrap was looked at, and skipped
	if got := n.resp.texts(); !slices.Equal(got, []string{"hi"}) {
		t.Fatalf("Responder saw %q before the takeover, want only hi", got)
	}

	mu.Lock()
	running = append(running, later.pk)
	mu.Unlock()
	if err := svc.TakeOver(context.Background(), later.pk); err != nil {
		t.Fatal(err)
	}
	carol.replyTo(toLater.ID)
}
