package bindings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/internal/redact"
)

// mcpSession is one live MCP client session for a service_uri.
type mcpSession struct {
	uri  string
	sess *mcp.ClientSession
}

// close ends the session; a stdio server that had to be terminated is
// not an error (it was asked to stop).
func (s *mcpSession) close() error {
	err := s.sess.Close()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return nil
	}
	return err
}

// callMCP calls the binding's mcp_action with the arguments as an MCP
// tools/call on the session for its service_uri.
func (r *Runner) callMCP(ctx context.Context, c Call) (json.RawMessage, error) {
	args, err := mcpArgs(c)
	if err != nil {
		return nil, err
	}
	if c.Binding.MCPAction == "" {
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "tool %s: mcp_service binding has no mcp_action", c.Tool)
	}
	s, err := r.session(ctx, c.Binding.ServiceURI)
	if err != nil {
		return nil, err
	}
	res, err := s.sess.CallTool(ctx, &mcp.CallToolParams{Name: c.Binding.MCPAction, Arguments: args})
	if errors.Is(err, mcp.ErrConnectionClosed) { // died since: start it again, once
		r.forget(s)
		if s, err = r.session(ctx, c.Binding.ServiceURI); err == nil {
			res, err = s.sess.CallTool(ctx, &mcp.CallToolParams{Name: c.Binding.MCPAction, Arguments: args})
		}
	}
	if err != nil {
		return nil, mcpError(c, err)
	}
	return renderToolResult(c, res)
}

// mcpArgs decodes the arguments into the object MCP expects.
func mcpArgs(c Call) (map[string]any, error) {
	args := map[string]any{}
	if len(strings.TrimSpace(string(c.Args))) == 0 || strings.TrimSpace(string(c.Args)) == "null" {
		return args, nil
	}
	if err := json.Unmarshal(c.Args, &args); err != nil {
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "tool %s: arguments must be a JSON object", c.Tool)
	}
	return args, nil
}

// session returns the live session for uri, starting one if needed.
// Starts of one uri are serialised; r.mu is not held while starting, so
// other services and Close are not held up by a slow server.
func (r *Runner) session(ctx context.Context, uri string) (*mcpSession, error) {
	ep, err := r.endpoint(uri)
	if err != nil {
		return nil, err
	}
	start := r.startLock(uri)
	start.Lock()
	defer start.Unlock()
	if s, err := r.live(uri); s != nil || err != nil {
		return s, err
	}
	sess, err := connectMCP(ctx, ep, r.http)
	if err != nil {
		return nil, &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: fmt.Sprintf("MCP service %q could not be started", redact.URL(uri)), Err: err}
	}
	return r.adopt(uri, sess)
}

// startLock returns the lock that serialises starts of uri.
func (r *Runner) startLock(uri string) *sync.Mutex {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.starts[uri] == nil {
		r.starts[uri] = &sync.Mutex{}
	}
	return r.starts[uri]
}

// live returns uri's session, nil if there is none, or an error once closed.
func (r *Runner) live(uri string) (*mcpSession, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errRunnerClosed
	}
	return r.mcp[uri], nil
}

// adopt registers a new session and its watcher, which forgets it when
// it ends (so the next call starts a new one).
func (r *Runner) adopt(uri string, sess *mcp.ClientSession) (*mcpSession, error) {
	s := &mcpSession{uri: uri, sess: sess}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		s.close()
		return nil, errRunnerClosed
	}
	r.mcp[uri] = s
	r.wg.Go(func() { sess.Wait(); r.forget(s) })
	return s, nil
}

// forget drops s if it is still the session for its uri, and closes it.
func (r *Runner) forget(s *mcpSession) {
	r.mu.Lock()
	if r.mcp[s.uri] == s {
		delete(r.mcp, s.uri)
	}
	r.mu.Unlock()
	s.close()
}

// Stop ends the live session of uri, if any, and stops the process it
// started (an approval withdrawn). The next call starts it again if the
// endpoint still resolves.
func (r *Runner) Stop(uri string) {
	r.mu.Lock()
	s := r.mcp[uri]
	r.mu.Unlock()
	if s != nil {
		r.forget(s)
	}
}

// mcpConnectTimeout bounds starting a server and the MCP handshake.
const mcpConnectTimeout = 30 * time.Second

// connectMCP starts or reaches the endpoint and initializes a session.
// The session outlives ctx: only the handshake is bound to it.
// endpoint resolves a service_uri: the operator's map first (any URI
// form, did:nuwa:mcp:… included: the node has no DID resolver), else an
// http(s) URL is itself a streamable HTTP endpoint, reached through the
// same SSRF guard as the HTTP bindings.
func (r *Runner) endpoint(uri string) (MCPEndpoint, error) {
	if r.cfg.Resolve != nil {
		if ep, ok := r.cfg.Resolve(uri); ok {
			return ep, nil
		}
	}
	if ep, ok := r.cfg.MCP[uri]; ok {
		return ep, nil
	}
	if u, err := url.Parse(uri); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		return MCPEndpoint{URL: uri, guarded: true}, nil
	}
	if strings.HasPrefix(uri, "nostr:") && r.cfg.Nostr != nil {
		t, err := r.cfg.Nostr(uri)
		if err != nil {
			return MCPEndpoint{}, capabilities.Errorf(capabilities.CodeInvalidInput, "service_uri %q: %v", uri, err)
		}
		return MCPEndpoint{nostr: t}, nil
	}
	return MCPEndpoint{}, capabilities.Errorf(capabilities.CodeNotFound,
		"no MCP service is configured for service_uri %q (an http(s) URL is used as it is, nostr:<npub or nprofile> is a ContextVM server; any other URI needs an entry in the node's bindings.mcp map)", redact.URL(uri))
}

// connectMCP starts or reaches ep; a guarded endpoint (a URL taken from a
// package, not from the operator) goes through guarded, the SSRF-checked
// client.
func connectMCP(ctx context.Context, ep MCPEndpoint, guarded *http.Client) (*mcp.ClientSession, error) {
	var (
		t  mcp.Transport
		sp *sandboxProc // a sandboxed child: its stderr explains a failed start
	)
	switch {
	case ep.nostr != nil:
		t = ep.nostr
	case len(ep.Command) > 0 && ep.Sandbox != nil:
		p, err := startSandbox(ep.Command, ep.Env, *ep.Sandbox)
		if err != nil {
			return nil, err
		}
		t, sp = &mcp.IOTransport{Reader: p.stdout, Writer: p}, p
	case len(ep.Command) > 0:
		cmd := exec.Command(ep.Command[0], ep.Command[1:]...)
		cmd.Env = childEnv(ep.Env)
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	case ep.URL != "":
		hc := &http.Client{}
		if ep.guarded {
			hc = guarded
		}
		t = &mcp.StreamableClientTransport{Endpoint: ep.URL, HTTPClient: hc, MaxRetries: -1}
	default:
		return nil, errors.New("bindings: MCP endpoint has neither Command nor URL")
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpConnectTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "agentnode", Version: "0.1.0"}, nil)
	sess, err := client.Connect(ctx, t, nil)
	if err != nil && sp != nil {
		sp.Close()
		err = fmt.Errorf("%w (its stderr: %q)", err, clipText(sp.Stderr(), 1024))
	}
	return sess, err
}

// childEnv is what a stdio MCP server sees: PATH and HOME, then extra.
func childEnv(extra []string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

// clipText is s cut to n bytes of valid UTF-8.
func clipText(s string, n int) string {
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

// renderToolResult is structuredContent if present, else {"content": [...]};
// a result flagged isError is EXECUTION_FAILED with its text.
func renderToolResult(c Call, res *mcp.CallToolResult) (json.RawMessage, error) {
	if res.IsError {
		return nil, capabilities.Errorf(capabilities.CodeExecutionFailed, "tool %s: MCP tool %s failed: %s", c.Tool, c.Binding.MCPAction, contentText(res.Content))
	}
	var v any = res.StructuredContent
	if v == nil {
		content := res.Content
		if content == nil {
			content = []mcp.Content{}
		}
		v = map[string]any{"content": content}
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: fmt.Sprintf("tool %s: MCP result could not be encoded", c.Tool), Err: err}
	}
	return out, nil
}

// contentText joins the text items of an MCP result.
func contentText(content []mcp.Content) string {
	var parts []string
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		return "no message"
	}
	return strings.Join(parts, "; ")
}

// mcpError codes a failed tools/call.
func mcpError(c Call, err error) error {
	if capabilities.CodeOf(err) == capabilities.CodeTimeout {
		return &capabilities.Error{Code: capabilities.CodeTimeout, Message: fmt.Sprintf("tool %s: MCP service %q did not answer in time", c.Tool, redact.URL(c.Binding.ServiceURI)), Err: err}
	}
	return &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: fmt.Sprintf("tool %s: MCP tool %s on %q failed: %s", c.Tool, c.Binding.MCPAction, redact.URL(c.Binding.ServiceURI), redact.Text(err.Error())), Err: err}
}
