package bindings

import "github.com/agentnode/agentnode/internal/netguard"

// The SSRF guard. HTTP bindings take their URLs from capability packages,
// that is from strangers, so a binding must not become a way into the
// node's own network: every connection the HTTP client opens — the first
// request, each redirect, each re-resolution of a name — is checked at
// dial time against the address actually dialled, so DNS rebinding and
// redirects to internal addresses are refused too. The check is
// internal/netguard's (shared with the relay client).

// BlockedError is a connection the guard refused.
type BlockedError = netguard.BlockedError

// newGuard returns the policy of HTTP bindings.
func newGuard(allowPrivate bool, allowHosts []string) *netguard.Policy {
	return &netguard.Policy{AllowPrivate: allowPrivate, AllowHosts: allowHosts, Label: "bindings"}
}
