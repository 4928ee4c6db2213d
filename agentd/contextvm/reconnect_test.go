package contextvm_test

import (
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/contextvm"
	"github.com/agentnode/agentnode/internal/testkit"
)

// A client's reply subscription outlives a relay that goes away and comes
// back on the same address: it retries on the backoff schedule while the
// relay refuses, subscribes again once it is back, and the session's next
// call is answered.
func TestClient_ResubscribesWhenTheRelayComesBack(t *testing.T) {
	f := startFixture(t, contextvm.ServerConfig{})
	outage := testkit.NewOutage(t, strings.TrimPrefix(f.url, "ws://"))
	cs := f.connectVia(t, "ws://"+outage.Addr(), testkit.NewKey(t), contextvm.EncryptionDisabled)
	callEcho(t, cs, "before")
	subscriptions := func() int { return f.relay.Stats().Subscriptions }
	waitFor(t, "the reply subscription", func() bool { return subscriptions() == 1 })
	for round := range 2 {
		outage.Down()
		refused := outage.Refused()
		waitFor(t, "the subscription to drop", func() bool { return subscriptions() == 0 })
		waitFor(t, "two retries refused", func() bool { return outage.Refused() >= refused+2 })
		outage.Up()
		waitFor(t, "the subscription back", func() bool { return subscriptions() == 1 })
		callEcho(t, cs, "after outage "+string(rune('a'+round)))
	}
}
