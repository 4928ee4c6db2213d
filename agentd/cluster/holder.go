package cluster

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/lease"
	"github.com/agentnode/agentnode/jsonrpc"
)

// PathACP is the Agent Context Protocol endpoint, where forwarded calls go.
const PathACP = "/acp"

// HeaderForwarded marks a request one instance forwarded to another (its
// value names the sender); such a request is served where it arrives,
// never forwarded again.
const HeaderForwarded = "X-Agentnode-Forwarded-By"

// HeaderServedBy names, on a forwarded request's response, the instance
// that answered it.
const HeaderServedBy = "X-Agentnode-Served-By"

// holder is agent's lease when another instance holds it, it is fresh
// and names a URL: the one test of "held elsewhere" every forward makes.
// ok is false otherwise (l is what the database said, if anything).
func (s *Shared) holder(ctx context.Context, agent string) (l lease.Lease, ok bool) {
	l, err := s.leases.Get(ctx, agent)
	if err != nil || l.Holder == "" || l.URL == "" || l.Holder == s.Instance() {
		return l, false
	}
	return l, s.cfg.Now().Before(l.Expires)
}

// unavailableError is the JSON-RPC error of a call for agent, whose
// lease is l, that no instance can answer now.
func (s *Shared) unavailableError(agent string, l lease.Lease) *jsonrpc.Error {
	why := fmt.Sprintf("agent %s runs on no instance right now (being taken over); retry", agent)
	if l.Holder != "" && l.Holder != s.Instance() {
		why = fmt.Sprintf("agent %s runs on instance %s (%s), which does not answer; retry", agent, l.Holder, l.URL)
	}
	return &jsonrpc.Error{Code: agentrpc.CodeAgentUnavailable, Message: why,
		Data: map[string]string{"agentId": agent, "holder": l.Holder, "url": l.URL}}
}

// holderClient calls the /acp endpoint of the instance holding a lease,
// bearing the shared API token and the forwarding mark.
type holderClient struct {
	http     *http.Client
	token    string
	instance string // this instance: the forwarding mark's value
}

// call sends method to l's holder and decodes its result into result. A
// JSON-RPC error answer is a *jsonrpc.Error; anything else failed on the
// way.
func (c holderClient) call(ctx context.Context, l lease.Lease, method string, params, result any) error {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+c.token)
	h.Set(HeaderForwarded, c.instance)
	rc := jsonrpc.HTTPClient{URL: strings.TrimRight(l.URL, "/") + PathACP, HTTP: c.http, Header: h}
	return rc.Call(ctx, method, params, result)
}
