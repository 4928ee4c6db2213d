// Package netguard keeps connections that strangers name out of the
// node's own network (SSRF): a Policy dials host:port and checks, at dial
// time, the address actually connected to — after name resolution, for
// every address tried — so loopback, private, link-local (cloud metadata)
// and other non-public addresses are refused unless the Policy allows
// them, and DNS rebinding cannot get round the check.
//
// HTTP bindings (capabilities/bindings) and the relay client
// (internal/relayclient, for relays named in tags, relay lists and
// service URIs) dial through it.
//
// Use:
//
//	p := &netguard.Policy{AllowHosts: []string{"relay.internal", "10.1.0.0/16"}}
//	tr := &http.Transport{Proxy: nil, DialContext: p.DialContext}
//	_, err := (&http.Client{Transport: tr}).Get("http://169.254.169.254/")
//	var blocked *netguard.BlockedError
//	errors.As(err, &blocked) // true: "link-local (cloud metadata lives here)"
package netguard
