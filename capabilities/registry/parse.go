package registry

import (
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/nbd-wtf/go-nostr"
)

// fromEvent turns a kind-30199 event into its package: acp.FromEvent with
// zero Options (id, signature, tags against content, every package rule).
func fromEvent(evt *nostr.Event) (*acp.Package, error) {
	return acp.FromEvent(evt, acp.Options{})
}
