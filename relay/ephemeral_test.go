package relay

import (
	"context"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// seenIDs collects the ids an OnEphemeral listener is handed.
type seenIDs struct {
	mu  sync.Mutex
	ids []string
}

func (s *seenIDs) add(evt *nostr.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = append(s.ids, evt.ID)
}

func (s *seenIDs) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ids...)
}

func TestRelay_OnEphemeral(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	sk := nostr.GeneratePrivateKey()
	var got seenIDs
	remove := tr.OnEphemeral(got.add)

	overWS := signed(t, sk, 25910, nostr.Tags{{"p", hexID(1)}}, "over the wire")
	mustPublish(t, tr.connect(t), overWS) // accepted although no client listens
	inProcess := signed(t, sk, 20001, nil, "in process")
	if err := tr.Publish(context.Background(), inProcess); err != nil {
		t.Fatal(err)
	}
	regular := signed(t, sk, 1, nil, "stored, not ephemeral")
	if err := tr.Publish(context.Background(), regular); err != nil {
		t.Fatal(err)
	}
	// The listener runs before the OK is sent and before Publish returns.
	if ids := got.list(); len(ids) != 2 || ids[0] != overWS.ID || ids[1] != inProcess.ID {
		t.Fatalf("listener saw %v, want [%s %s]", ids, overWS.ID, inProcess.ID)
	}

	remove()
	if err := tr.Publish(context.Background(), signed(t, sk, 20002, nil, "after remove")); err != nil {
		t.Fatal(err)
	}
	if ids := got.list(); len(ids) != 2 {
		t.Fatalf("listener called after remove: %v", ids)
	}
}

func TestRelay_OnEphemeralPerRelay(t *testing.T) {
	a := openTestRelay(t, t.TempDir(), Limits{})
	b := openTestRelay(t, t.TempDir(), Limits{})
	var onA, onB seenIDs
	defer a.OnEphemeral(onA.add)()
	defer b.OnEphemeral(onB.add)()
	evt := signed(t, nostr.GeneratePrivateKey(), 20001, nil, "to a")
	if err := a.Publish(context.Background(), evt); err != nil {
		t.Fatal(err)
	}
	if len(onA.list()) != 1 || len(onB.list()) != 0 {
		t.Fatalf("a saw %v, b saw %v: want only a", onA.list(), onB.list())
	}
}
