package lookup

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/internal/netguard"
)

// allowLoopback lets the lookups of tests dial their relays on 127.0.0.1.
var allowLoopback = netguard.Policy{AllowPrivate: true}

// counted fronts a relay on loopback with a handler that counts the
// requests reaching it, and returns that front's URL.
func counted(t *testing.T, r served) (url string, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		r.Relay.ServeHTTP(w, req)
	}))
	t.Cleanup(front.Close)
	return "ws" + strings.TrimPrefix(front.URL, "http"), hits
}

// syncBuffer is a log sink safe for the lookup's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// An nevent naming a relay on 127.0.0.1 (a stranger's way to probe the
// node's own network) is not dialled by default: the relay sees no
// request, the log says why. Allowed, the same pointer is followed.
func TestResolve_hintOnLoopbackRefusedByDefault(t *testing.T) {
	home := openRelay(t)
	bob := newKey()
	lesson := bob.publish(t, home.Relay, 4129, nostr.Tags{{"title", "t"}, {"category", "c"}, {"e", bob.pk}}, "a lesson")
	url, hits := counted(t, home)
	s, _ := nip19.EncodeEvent(lesson.ID, []string{url}, bob.pk)
	p, err := ParsePointer(s)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	lk := New(Config{Local: openRelay(t).Relay, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if got, err := lk.Resolve(context.Background(), p); !errors.Is(err, ErrNotFound) {
		t.Fatalf("default policy: Resolve = %v, %v; want ErrNotFound", got, err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the hinted relay on loopback saw %d requests, want 0", n)
	}
	if l := logs.String(); !strings.Contains(l, "not a public address") || !strings.Contains(l, "loopback") {
		t.Errorf("log does not say why the relay was not dialled:\n%s", l)
	}

	lk = New(Config{Local: openRelay(t).Relay, Logger: quiet(), Network: allowLoopback})
	if got, err := lk.Resolve(context.Background(), p); err != nil || len(got) != 1 || got[0].ID != lesson.ID {
		t.Fatalf("loopback allowed: Resolve = %v, %v; want the lesson", got, err)
	}
	if hits.Load() == 0 {
		t.Error("loopback allowed: the relay saw no request")
	}
}

// A NIP-65 relay list naming 127.0.0.1 is not followed by default either.
func TestFind_relayListOnLoopbackRefusedByDefault(t *testing.T) {
	home, node := openRelay(t), openRelay(t)
	alice := newKey()
	alice.publish(t, home.Relay, 0, nil, `{"name":"alice"}`)
	url, hits := counted(t, home)
	alice.publish(t, node.Relay, kindRelayList, nostr.Tags{{"r", url}}, "")
	f := nostr.Filter{Kinds: []int{0}, Authors: []string{alice.pk}}
	if _, err := New(Config{Local: node.Relay, Logger: quiet()}).Find(context.Background(), f, alice.pk, nil); !errors.Is(err, ErrNotFound) || hits.Load() != 0 {
		t.Fatalf("default policy: Find = %v with %d requests seen; want ErrNotFound and none", err, hits.Load())
	}
	if got, err := New(Config{Local: node.Relay, Logger: quiet(), Network: allowLoopback}).Find(context.Background(), f, alice.pk, nil); err != nil || len(got) != 1 {
		t.Fatalf("loopback allowed: Find = %v, %v; want alice's profile", got, err)
	}
}
