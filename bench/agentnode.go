package bench

import (
	"context"
	"log/slog"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay"
)

// agentnodeRelay is agentnode's embedded relay with the per-IP event rate
// limit disabled (one benchmark client would hit it at once).
type agentnodeRelay struct{ *relay.Relay }

var _ relayUnderTest = agentnodeRelay{}

func openAgentnode(ctx context.Context, dir string) (relayUnderTest, error) {
	r, err := relay.Open(ctx, relay.Config{
		DataDir: dir,
		Limits:  relay.Limits{EventsPerSecond: -1, RequestsPerSecond: -1},
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, err
	}
	return agentnodeRelay{r}, nil
}

// Load publishes evt in-process: the same checks and storage as a
// websocket EVENT, including signature verification and the search index.
func (a agentnodeRelay) Load(ctx context.Context, evt *nostr.Event) error {
	return a.Publish(ctx, evt)
}
