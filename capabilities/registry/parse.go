package registry

import (
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/nbd-wtf/go-nostr"
)

// ParseFunc turns a kind-30199 event into its package. The default is
// acp.FromEvent with zero Options (id, signature, tags against content,
// every package rule); WithParser sets another (e.g. with the daemon's
// x-asm schema check).
type ParseFunc func(evt *nostr.Event) (*acp.Package, error)

func fromEvent(evt *nostr.Event) (*acp.Package, error) {
	return acp.FromEvent(evt, acp.Options{})
}
