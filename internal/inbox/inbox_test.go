package inbox

import (
	"context"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

func TestAddressee(t *testing.T) {
	keys := func(_ context.Context, pubkey string) (string, bool) { return "sk-" + pubkey, pubkey == "local" }
	evt := &nostr.Event{Tags: nostr.Tags{{"p"}, {"e", "local"}, {"p", "stranger"}, {"p", "local"}}}
	agent, sk, ok := Addressee(context.Background(), evt, keys)
	if got, want := agent+" "+sk, "local sk-local"; !ok || got != want {
		t.Fatalf("got %q %v, want %q true", got, ok, want)
	}
	if _, _, ok := Addressee(context.Background(), &nostr.Event{Tags: nostr.Tags{{"p", "stranger"}}}, keys); ok {
		t.Fatal("an event p-tagging no local agent has an addressee")
	}
}

func TestWork(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	queue := make(chan int, 10)
	served := make(chan int, 10)
	var wg sync.WaitGroup
	Work(ctx, &wg, 3, queue, func(_ context.Context, n int) { served <- n })
	sum := 0
	for n := range 10 {
		queue <- n
	}
	for range 10 {
		sum += <-served
	}
	cancel()
	wg.Wait() // returns only once every worker has stopped
	if sum != 45 {
		t.Fatalf("served items sum to %d, want 45", sum)
	}
}
