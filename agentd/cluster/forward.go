package cluster

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"

	"github.com/agentnode/agentnode/agentd/lease"
	"github.com/agentnode/agentnode/jsonrpc"
)

// Forward wraps next: requests for the agent agentOf names go to its
// holder unless it runs here. agentOf returns "" for requests about no
// running agent (served here). A forwarded request is served here,
// whatever it names, and its context says so (forwardCall).
func (s *Shared) Forward(next http.Handler, agentOf func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(HeaderForwarded) != "" {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), forwardedKey{}, true)))
			return
		}
		if agent := s.forwardee(r, agentOf); agent != "" {
			s.proxy(w, r, agent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// forwardee is the installed agent r is about when it does not run here
// and r bears the API token; else "".
func (s *Shared) forwardee(r *http.Request, agentOf func(*http.Request) string) string {
	if !s.authorized(r) {
		return "" // every forwarded endpoint needs the token: refused here, not by the holder
	}
	ref := agentOf(r)
	if ref == "" || s.local.Agents == nil {
		return ""
	}
	a, err := s.lookupFresh(r, ref)
	if err != nil || s.Runs(a.PubKey) {
		return "" // not installed (answered here: not found) or running here
	}
	return a.PubKey
}

// proxy sends r to the instance holding agent's lease.
func (s *Shared) proxy(w http.ResponseWriter, r *http.Request, agent string) {
	l, ok := s.holder(r.Context(), agent)
	target, err := url.Parse(l.URL)
	if !ok || err != nil {
		s.unavailable(w, r, agent, l)
		return
	}
	p := &httputil.ReverseProxy{
		Transport: s.client.http.Transport, // its dial and header bounds; the client's end cancels the rest
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
			pr.Out.Host = r.Host
			pr.Out.Header.Set(HeaderForwarded, s.client.instance)
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Set(HeaderServedBy, l.Holder)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.log.Warn("forwarding to the agent's instance", "agent", agent, "holder", l.Holder, "url", l.URL, "err", err)
			s.unavailable(w, r, agent, l)
		},
	}
	p.ServeHTTP(w, r)
}

// unavailableBody is the JSON error of a request other than /acp that no
// instance can answer now.
type unavailableBody struct {
	Error  string `json:"error"`
	Holder string `json:"holder"`
	URL    string `json:"url"`
}

// unavailable answers 503 with Retry-After (one lease TTL): the agent is
// being taken over, or its holder cannot be reached. /acp gets a JSON-RPC
// error (agentrpc.CodeAgentUnavailable), the rest a JSON error.
func (s *Shared) unavailable(w http.ResponseWriter, r *http.Request, agent string, l lease.Lease) {
	rpcErr := s.unavailableError(agent, l)
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(s.leases.TTL().Seconds()))))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	if r.URL.Path == PathACP {
		_ = json.NewEncoder(w).Encode(jsonrpc.Response{JSONRPC: "2.0", Error: rpcErr})
		return
	}
	_ = json.NewEncoder(w).Encode(unavailableBody{Error: rpcErr.Message, Holder: l.Holder, URL: l.URL})
}
