package agentd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/internal/jsonapi"
	"github.com/agentnode/agentnode/lessons"
)

// Client talks to a running daemon's HTTP API (Handler). Errors the daemon
// answers are *APIError, so errors.Is(err, ErrUnknownAgent) works here too.
type Client struct {
	BaseURL string       // e.g. http://127.0.0.1:7447
	Token   string       // the node's API token (TokenPath), needed by writes
	HTTP    *http.Client // nil: http.DefaultClient
}

// List returns the installed agents.
func (c *Client) List(ctx context.Context) ([]Agent, error) {
	var out struct {
		Agents []Agent `json:"agents"`
	}
	err := c.do(ctx, http.MethodGet, "/api/agents", nil, &out)
	return out.Agents, err
}

// Install installs an agent (see Daemon.Install).
func (c *Client) Install(ctx context.Context, req InstallRequest) (Installed, error) {
	var out Installed
	return out, c.do(ctx, http.MethodPost, "/api/agents", req, &out)
}

// Show returns one agent (see Daemon.Show).
func (c *Client) Show(ctx context.Context, agent string) (AgentView, error) {
	var out AgentView
	return out, c.do(ctx, http.MethodGet, agentPath(agent, ""), nil, &out)
}

// Remove uninstalls an agent (see Daemon.Remove).
func (c *Client) Remove(ctx context.Context, agent string, retract bool) (Removed, error) {
	var out Removed
	p := agentPath(agent, "")
	if retract {
		p += "?retract=true"
	}
	return out, c.do(ctx, http.MethodDelete, p, nil, &out)
}

// Effective returns the agent's effective behaviour, with the given
// message nudges if any (see Daemon.EffectiveFor).
func (c *Client) Effective(ctx context.Context, agent string, messageNudges []string) (lessons.Effective, error) {
	var out lessons.Effective
	p := agentPath(agent, "/effective")
	if len(messageNudges) > 0 {
		p += "?" + url.Values{"nudge": messageNudges}.Encode()
	}
	return out, c.do(ctx, http.MethodGet, p, nil, &out)
}

// PlanUpgrade shows what an upgrade would change (see Daemon.PlanUpgrade).
func (c *Client) PlanUpgrade(ctx context.Context, agent, to string) (UpgradePlan, error) {
	var out UpgradePlan
	p := agentPath(agent, "/upgrade")
	if to != "" {
		p += "?" + url.Values{"to": {to}}.Encode()
	}
	return out, c.do(ctx, http.MethodGet, p, nil, &out)
}

// Upgrade switches the agent to another version (see Daemon.Upgrade).
func (c *Client) Upgrade(ctx context.Context, agent, to string) (UpgradePlan, error) {
	var out UpgradePlan
	return out, c.do(ctx, http.MethodPost, agentPath(agent, "/upgrade"), map[string]string{"to": to}, &out)
}

// SetAutoUpgrade switches the agent's automatic-upgrade policy.
func (c *Client) SetAutoUpgrade(ctx context.Context, agent string, on bool) (Agent, error) {
	var out Agent
	return out, c.do(ctx, http.MethodPut, agentPath(agent, "/auto-upgrade"), map[string]bool{"enabled": on}, &out)
}

// AddNudge attaches a nudge to the agent.
func (c *Client) AddNudge(ctx context.Context, agent, nudge string) (NudgeChange, error) {
	var out NudgeChange
	return out, c.do(ctx, http.MethodPost, agentPath(agent, "/nudges"), map[string]string{"nudge": nudge}, &out)
}

// RemoveNudge detaches a nudge from the agent.
func (c *Client) RemoveNudge(ctx context.Context, agent, nudge string) (NudgeChange, error) {
	var out NudgeChange
	return out, c.do(ctx, http.MethodDelete, agentPath(agent, "/nudges/"+url.PathEscape(strings.TrimSpace(nudge))), nil, &out)
}

// Learn makes the agent publish a lesson (see Daemon.Learn).
func (c *Client) Learn(ctx context.Context, agent, title, category, content string) (*nostr.Event, error) {
	var out nostr.Event
	body := learnArgs{Title: title, Category: category, Content: content}
	if err := c.do(ctx, http.MethodPost, agentPath(agent, "/lessons"), body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func agentPath(agent, suffix string) string {
	return "/api/agents/" + url.PathEscape(strings.TrimSpace(agent)) + suffix
}

// do sends one request and decodes the answer into out, or the error.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	status, body, err := jsonapi.Do(ctx, c.HTTP, method, jsonapi.URL(c.BaseURL, path), c.Token, in)
	if err != nil {
		return fmt.Errorf("agent API: %w", err)
	}
	if status >= 300 {
		return apiError(status, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("agent API: decode answer: %w", err)
	}
	return nil
}

// apiError decodes an error answer; one that is not ours (a proxy, an old
// node without the API) keeps its status.
func apiError(status int, body []byte) error {
	var e APIError
	if json.Unmarshal(body, &e) != nil || e.Code == "" {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return &APIError{Status: status, Code: "http_" + strconv.Itoa(status), Message: fmt.Sprintf("HTTP %d: %s", status, msg)}
	}
	e.Status = status
	return &e
}

// Caps lists the capabilities installed on the agent.
func (c *Client) Caps(ctx context.Context, agent string) ([]InstalledCap, error) {
	var out struct {
		Caps []InstalledCap `json:"caps"`
	}
	err := c.do(ctx, http.MethodGet, agentPath(agent, "/caps"), nil, &out)
	return out.Caps, err
}

// InstallCap installs a capability package on the agent (see Daemon.InstallCap).
func (c *Client) InstallCap(ctx context.Context, agent string, req CapInstallRequest) (CapChange, error) {
	var out CapChange
	return out, c.do(ctx, http.MethodPost, agentPath(agent, "/caps"), req, &out)
}

// UpgradeCap moves an installed capability to another version (see Daemon.UpgradeCap).
func (c *Client) UpgradeCap(ctx context.Context, agent, capRef string, req CapUpgradeRequest) (CapChange, error) {
	var out CapChange
	return out, c.do(ctx, http.MethodPost, agentPath(agent, "/caps/"+url.PathEscape(strings.TrimSpace(capRef))+"/upgrade"), req, &out)
}

// RemoveCap uninstalls a capability from the agent (see Daemon.RemoveCap).
func (c *Client) RemoveCap(ctx context.Context, agent, capRef string) (CapChange, error) {
	var out CapChange
	return out, c.do(ctx, http.MethodDelete, agentPath(agent, "/caps/"+url.PathEscape(strings.TrimSpace(capRef))), nil, &out)
}

// Chat sends one message to the agent (see Daemon.Chat).
func (c *Client) Chat(ctx context.Context, agent, conversation, message string) (ChatReply, error) {
	var out ChatReply
	return out, c.do(ctx, http.MethodPost, agentPath(agent, "/chat"), ChatRequest{Conversation: conversation, Message: message}, &out)
}
