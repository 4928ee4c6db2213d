package dm_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// Every local agent publishes its NIP-65 relay list (kind 10002) naming
// the node's relay, once: other nodes look its events up there.
func TestService_publishesNIP65RelayList(t *testing.T) {
	n := newNode(t)
	agent := n.addAgent()
	n.start(n.config())
	stop := n.start(n.config()) // a second start publishes nothing new
	stop()
	got, err := n.relay.QuerySync(context.Background(), nostr.Filter{Kinds: []int{10002}, Authors: []string{agent.pk}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0].Tags, nostr.Tags{{"r", n.url}}) {
		t.Fatalf("kind 10002 of the agent: %+v, want one naming %s", got, n.url)
	}
}
