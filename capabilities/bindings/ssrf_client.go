package bindings

import "net/http"

// GuardedClient is an HTTP client behind the SSRF guard, for other parts
// of the node that fetch URLs strangers name (Blossom mirrors, the files
// of agent definitions): every connection is checked at dial time, so
// private, loopback and link-local addresses are refused unless
// allowPrivate or allowHosts (names, IPs or CIDRs) let them in; only
// http and https, at most a few redirects. Set a timeout per request
// with its context.
func GuardedClient(allowPrivate bool, allowHosts []string) *http.Client {
	return newHTTPClient(newGuard(allowPrivate, allowHosts))
}
