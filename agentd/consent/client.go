package consent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentnode/agentnode/agentd/internal/jsonapi"
)

// Client talks to OwnerHandler on a running node (the CLI's `agentnode consent`).
type Client struct {
	BaseURL string       // e.g. http://127.0.0.1:7447
	Token   string       // the node's API token
	HTTP    *http.Client // nil: http.DefaultClient
}

// Overview lists the policy, the approvals with status (""= all) and the
// revoked agents.
func (c *Client) Overview(ctx context.Context, status Status) (Overview, error) {
	var out Overview
	p := "/api/consent"
	if status != "" {
		p += "?status=" + url.QueryEscape(string(status))
	}
	return out, c.do(ctx, http.MethodGet, p, nil, &out)
}

// Approve approves a pending approval.
func (c *Client) Approve(ctx context.Context, id string) (Approval, error) {
	var out Approval
	return out, c.do(ctx, http.MethodPost, "/api/consent/approvals/"+url.PathEscape(id)+"/approve", nil, &out)
}

// Deny denies a pending approval.
func (c *Client) Deny(ctx context.Context, id, reason string) (Approval, error) {
	var out Approval
	return out, c.do(ctx, http.MethodPost, "/api/consent/approvals/"+url.PathEscape(id)+"/deny", map[string]string{"reason": reason}, &out)
}

// Revoke revokes an agent (npub or hex).
func (c *Client) Revoke(ctx context.Context, agent, reason string) (Revocation, error) {
	var out Revocation
	return out, c.do(ctx, http.MethodPost, "/api/consent/revoked", map[string]string{"agent": agent, "reason": reason}, &out)
}

// Unrevoke lifts an agent's revocation; it reports whether it was revoked.
func (c *Client) Unrevoke(ctx context.Context, agent string) (bool, error) {
	var out struct {
		Revoked bool `json:"revoked"`
	}
	err := c.do(ctx, http.MethodDelete, "/api/consent/revoked/"+url.PathEscape(strings.TrimSpace(agent)), nil, &out)
	return out.Revoked, err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	status, b, err := jsonapi.Do(ctx, c.HTTP, method, jsonapi.URL(c.BaseURL, path), c.Token, in)
	if err != nil {
		return fmt.Errorf("consent API: %w", err)
	}
	if status >= 300 {
		var e APIError
		if json.Unmarshal(b, &e) != nil || e.Code == "" {
			return &APIError{Status: status, Code: fmt.Sprintf("http_%d", status), Message: fmt.Sprintf("HTTP %d: %.200s", status, strings.TrimSpace(string(b)))}
		}
		e.Status = status
		return &e
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("consent API: decode answer: %w", err)
	}
	return nil
}
