package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/lease"
	"github.com/agentnode/agentnode/agentd/requester"
	"github.com/agentnode/agentnode/internal/httpauth"
	"github.com/agentnode/agentnode/jsonrpc"
)

// With --postgres every instance answers the HTTP endpoints, but an agent
// runs on one of them (serve_agentpg.go). A request that needs the
// running agent (an /acp call naming it as target, CAP on it, a write to
// it through /api/agents) and reaches another instance is forwarded to
// the holder's advertised URL (the lease row); while nobody holds the
// lease (a takeover under way) it is answered 503 with Retry-After, naming
// the holder if there is one. A forwarded request carries
// headerForwarded and is never forwarded again.
const headerForwarded = "X-Agentnode-Forwarded-By"

// headerServedBy names, on a forwarded request's response, the instance
// that answered it.
const headerServedBy = "X-Agentnode-Served-By"

// forwardAgent wraps next: requests for the agent agentOf names go to its
// holder unless it runs here. agentOf returns "" for requests about no
// running agent (served here).
func (c *ServeCommand) forwardAgent(next http.Handler, agentOf func(*http.Request) string) http.Handler {
	if c.shared == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agent := c.forwardee(r, agentOf)
		if agent == "" {
			if r.Header.Get(headerForwarded) != "" { // served here, whatever it names (forwardCall)
				r = r.WithContext(context.WithValue(r.Context(), forwardedKey{}, true))
			}
			next.ServeHTTP(w, r)
			return
		}
		c.forward(w, r, agent)
	})
}

// forwardedKey marks the context of a request another instance forwarded.
type forwardedKey struct{}

// forwardCall is agentrpc.Config.Forward: one /acp call naming as target
// an agent another instance runs, whatever its transport (a websocket, an
// entry of a batch: a single call over HTTP was forwarded whole before),
// is sent to the holder as an HTTP JSON-RPC call bearing the API token,
// and its result or error is the answer here. A call that was forwarded
// to this instance is served here.
func (c *ServeCommand) forwardCall(ctx context.Context, method string, params json.RawMessage, target string) (json.RawMessage, bool, error) {
	if forwarded, _ := ctx.Value(forwardedKey{}).(bool); forwarded {
		return nil, false, nil
	}
	a, err := c.daemon.Lookup(target)
	if err != nil && c.shared.reloads.allow(time.Now(), minReloadGap) { // installed elsewhere an instant ago?
		if c.daemon.Reload(ctx) == nil {
			a, err = c.daemon.Lookup(target)
		}
	}
	if err != nil || a.PubKey == "" || c.runsHere(a.PubKey) {
		return nil, false, nil // not an installed agent (served here: remote, or not found), or running here
	}
	agent := a.PubKey
	l, err := c.shared.leases.Get(ctx, agent)
	if err != nil || l.Holder == "" || l.URL == "" || l.Holder == c.shared.leases.Instance() || !time.Now().Before(l.Expires) {
		return nil, true, c.unavailableError(agent, l)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(l.URL, "/")+pathACP, bytes.NewReader(body))
	if err != nil {
		return nil, true, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.shared.token)
	req.Header.Set(headerForwarded, c.shared.leases.Instance())
	resp, err := c.shared.fwd.Do(req)
	if err != nil {
		slog.Warn("forwarding an /acp call to the agent's instance", "method", method, "agent", agent, "holder", l.Holder, "url", l.URL, "err", err)
		return nil, true, c.unavailableError(agent, l)
	}
	defer resp.Body.Close()
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&out); err != nil || (out.Error == nil && out.Result == nil) {
		slog.Warn("forwarding an /acp call to the agent's instance", "method", method, "agent", agent, "holder", l.Holder, "status", resp.StatusCode, "err", err)
		return nil, true, c.unavailableError(agent, l)
	}
	slog.Info("acp call forwarded to the agent's instance", "method", method, "agent", agent, "holder", l.Holder)
	if out.Error != nil {
		return nil, true, out.Error
	}
	return out.Result, true, nil
}

// unavailableError is unavailable's JSON-RPC error, for one call.
func (c *ServeCommand) unavailableError(agent string, l lease.Lease) *jsonrpc.Error {
	why := fmt.Sprintf("agent %s runs on no instance right now (being taken over); retry", agent)
	if l.Holder != "" && l.Holder != c.shared.leases.Instance() {
		why = fmt.Sprintf("agent %s runs on instance %s (%s), which does not answer; retry", agent, l.Holder, l.URL)
	}
	return &jsonrpc.Error{Code: agentrpc.CodeAgentUnavailable, Message: why,
		Data: map[string]string{"agentId": agent, "holder": l.Holder, "url": l.URL}}
}

// forwardee is the installed agent r is about when it does not run here,
// r bears the API token and was not forwarded already; else "".
func (c *ServeCommand) forwardee(r *http.Request, agentOf func(*http.Request) string) string {
	if r.Header.Get(headerForwarded) != "" {
		return ""
	}
	if httpauth.Equal(c.shared.token, httpauth.Token(r)) != nil {
		return "" // every forwarded endpoint needs the token: refused here, not by the holder
	}
	ref := agentOf(r)
	if ref == "" {
		return ""
	}
	a, err := c.lookupFresh(r, ref)
	if err != nil || c.runsHere(a.PubKey) {
		return "" // not installed (answered here: not found) or running here
	}
	return a.PubKey
}

// lookupFresh is daemon.Lookup, reading the installed agents again first
// if ref is unknown (installed through another instance, whose
// notification has not arrived yet).
func (c *ServeCommand) lookupFresh(r *http.Request, ref string) (agentd.Agent, error) {
	a, err := c.daemon.Lookup(ref)
	if err == nil || c.shared == nil {
		return a, err
	}
	if rerr := c.reloadAgents(r); rerr != nil {
		return a, err
	}
	return c.daemon.Lookup(ref)
}

// reloadAgents reads the installed agents again for r. A request bearing
// the API token always does (a client reads its own write made through
// another instance); others at most once per minReloadGap, so that
// anonymous requests naming made-up agents cannot turn into a database
// read each.
func (c *ServeCommand) reloadAgents(r *http.Request) error {
	if httpauth.Equal(c.shared.token, httpauth.Token(r)) != nil && !c.shared.reloads.allow(time.Now(), minReloadGap) {
		return nil
	}
	return c.daemon.Reload(r.Context())
}

// forwardClient is the client of calls forwarded to an agent's holder:
// a holder that stops answering (a half-open connection) costs a call at
// most long, the bound of a long agent call here, instead of holding a
// websocket's calls for good.
func forwardClient(long time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.ResponseHeaderTimeout = long
	return &http.Client{Transport: t, Timeout: long}
}

// gap lets one thing happen at most once per interval.
type gap struct {
	mu   sync.Mutex
	last time.Time
}

// allow reports whether at least every has passed since the last allowed
// time, and if so makes now the last.
func (g *gap) allow(now time.Time, every time.Duration) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Sub(g.last) < every {
		return false
	}
	g.last = now
	return true
}

// minReloadGap is the least time between two reloads of the installed
// agents asked by requests without the API token.
const minReloadGap = time.Second

// freshAgents serves the agents' HTTP API after reading the installed
// agents again when the request names an agent this instance does not
// know, or lists them: with --postgres another instance may have installed
// or removed one an instant ago, and a client that did so through it
// reads its own write here too.
func (c *ServeCommand) freshAgents(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ref := r.PathValue("agent"); ref != "" {
			_, _ = c.lookupFresh(r, ref)
		} else if r.Method == http.MethodGet {
			if err := c.reloadAgents(r); err != nil {
				slog.Warn("reading the installed agents", "err", err)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// forward proxies r to the instance holding agent's lease.
func (c *ServeCommand) forward(w http.ResponseWriter, r *http.Request, agent string) {
	l, err := c.shared.leases.Get(r.Context(), agent)
	if err != nil || l.Holder == "" || l.URL == "" || l.Holder == c.shared.leases.Instance() || !time.Now().Before(l.Expires) {
		c.unavailable(w, r, agent, l)
		return
	}
	target, err := url.Parse(l.URL)
	if err != nil {
		c.unavailable(w, r, agent, l)
		return
	}
	p := &httputil.ReverseProxy{
		Transport: c.shared.fwd.Transport, // its dial and header bounds; the client's end cancels the rest
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
			pr.Out.Host = r.Host
			pr.Out.Header.Set(headerForwarded, c.shared.leases.Instance())
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Set(headerServedBy, l.Holder)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			slog.Warn("forwarding to the agent's instance", "agent", agent, "holder", l.Holder, "url", l.URL, "err", err)
			c.unavailable(w, r, agent, l)
		},
	}
	p.ServeHTTP(w, r)
}

// unavailable answers 503 with Retry-After (one lease TTL): the agent is
// being taken over, or its holder cannot be reached. /acp gets a JSON-RPC
// error (agentrpc.CodeAgentUnavailable), the rest a JSON error.
func (c *ServeCommand) unavailable(w http.ResponseWriter, r *http.Request, agent string, l lease.Lease) {
	rpcErr := c.unavailableError(agent, l)
	why := rpcErr.Message
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(c.shared.leases.TTL().Seconds()))))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	if r.URL.Path == pathACP {
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcErr})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": why, "holder": l.Holder, "url": l.URL})
}

// acpTarget is the target of a single /acp JSON-RPC call over HTTP POST
// (params.target: agent/message, agent/delegate); the body is read
// (up to max bytes) and put back. Batches and websockets are served here,
// each of their calls forwarded on its own (forwardCall).
func acpTarget(max int64) func(*http.Request) string {
	return func(r *http.Request) string {
		if r.Method != http.MethodPost || r.Body == nil {
			return ""
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil || int64(len(body)) > max {
			return ""
		}
		var call struct {
			Params struct {
				Target string `json:"target"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &call) != nil {
			return ""
		}
		return call.Params.Target
	}
}

// pathAgent is the {agent} path value (CAP).
func pathAgent(r *http.Request) string { return r.PathValue("agent") }

// apiAgentWrite is the agent of a write to /api/agents/{agent}/...
// (chat, capabilities, nudges, lessons, upgrades: the holder's daemon
// caches them); reads, installs and removals are served by any instance.
func apiAgentWrite(r *http.Request) string {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.PathValue("rest") == "" {
		return ""
	}
	return r.PathValue("agent")
}

// errNotHere: with --postgres, the agent runs on no instance right now
// (being taken over), or on one that does not answer.
var errNotHere = errors.New("agent not running on any reachable instance; retry")

// chatElsewhere runs one chat message of an agent another instance runs
// there, as an /acp agent/message to its holder (the conversation becomes
// that message's sessionId). A safety net: /acp calls naming the agent are
// forwarded before they get here (forwardCall), and tasks are executed by
// the holder; a chat can still land here while the agent changes
// instance.
func (c *ServeCommand) chatElsewhere(ctx context.Context, agent, conversation, text string) (string, error) {
	l, err := c.shared.leases.Get(ctx, agent)
	if err != nil || l.Holder == "" || l.URL == "" || l.Holder == c.shared.leases.Instance() || !time.Now().Before(l.Expires) {
		return "", fmt.Errorf("%w (agent %s, holder %q)", errNotHere, agent, l.Holder)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "agent/message",
		"params": agentrpc.MessageParams{Target: agent, Source: requester.From(ctx), Content: agentrpc.MessageContent{Type: "request",
			Payload: agentrpc.MessagePayload{Messages: []agentrpc.TextMessage{{Text: text}},
				Context: map[string]any{"sessionId": conversation}}}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(l.URL, "/")+pathACP, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.shared.token)
	req.Header.Set(headerForwarded, c.shared.leases.Instance())
	resp, err := c.shared.fwd.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w (agent %s on %s: %v)", errNotHere, agent, l.Holder, err)
	}
	defer resp.Body.Close()
	var out struct {
		Result *agentrpc.MessageResult `json:"result"`
		Error  *jsonrpc.Error          `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&out); err != nil {
		return "", fmt.Errorf("agent %s on %s: %d: %w", agent, l.Holder, resp.StatusCode, err)
	}
	switch {
	case out.Error != nil:
		return "", out.Error
	case out.Result == nil || len(out.Result.Content.Payload.Messages) == 0:
		return "", fmt.Errorf("agent %s on %s: no answer", agent, l.Holder)
	}
	return out.Result.Content.Payload.Messages[0].Text, nil
}
