package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Request is one JSON-RPC 2.0 request as a client sends it (and as the
// Nostr transports carry it). ID is raw: a string, a number, or absent for
// a notification.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// Response is one JSON-RPC 2.0 response as a client reads it: exactly one
// of Result and Error is set by a conforming server.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// NewRequest builds a request with params marshalled from v (nil: none).
func NewRequest(id any, method string, params any) (Request, error) {
	r := Request{JSONRPC: "2.0", Method: method}
	if id != nil {
		raw, err := json.Marshal(id)
		if err != nil {
			return r, fmt.Errorf("jsonrpc: request id: %w", err)
		}
		r.ID = raw
	}
	if params != nil {
		raw, ok := params.(json.RawMessage)
		if !ok {
			var err error
			if raw, err = json.Marshal(params); err != nil {
				return r, fmt.Errorf("jsonrpc: %s params: %w", method, err)
			}
		}
		r.Params = raw
	}
	return r, nil
}

// ErrBadResponse: the peer's answer is not a JSON-RPC response (not JSON,
// too large, or neither result nor error).
var ErrBadResponse = errors.New("jsonrpc: not a JSON-RPC response")

// DefaultMaxAnswerBytes bounds what HTTPClient reads of one answer.
const DefaultMaxAnswerBytes = 16 << 20

// HTTPClient calls methods on a JSON-RPC server over HTTP POST, one request
// per call. Header is added to every request (authorization, forwarding
// marks). A zero MaxResponseBytes means DefaultMaxAnswerBytes.
type HTTPClient struct {
	URL              string
	HTTP             *http.Client
	Header           http.Header
	MaxResponseBytes int64
}

// Call sends method with params and decodes the result into result (when
// not nil). A JSON-RPC error answer is returned as *Error (errors.As);
// transport failures and malformed answers are wrapped errors
// (ErrBadResponse for the latter).
func (c *HTTPClient) Call(ctx context.Context, method string, params, result any) error {
	raw, err := c.CallRaw(ctx, method, params)
	if err != nil || result == nil {
		return err
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("%w: %s result: %v", ErrBadResponse, method, err)
	}
	return nil
}

// CallRaw is Call returning the raw result.
func (c *HTTPClient) CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	req, err := NewRequest(1, method, params)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: %s: %w", method, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: %s: %w", method, err)
	}
	for k, vs := range c.Header {
		hreq.Header[k] = vs
	}
	hreq.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: %s to %s: %w", method, redactURL(c.URL), err)
	}
	defer resp.Body.Close()
	return readResponse(resp, method, c.maxResponse())
}

func (c *HTTPClient) maxResponse() int64 {
	if c.MaxResponseBytes > 0 {
		return c.MaxResponseBytes
	}
	return DefaultMaxAnswerBytes
}

// readResponse decodes one response of at most max bytes.
func readResponse(resp *http.Response, method string, max int64) (json.RawMessage, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: %s: reading the answer: %w", method, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: %s answer over %d bytes", ErrBadResponse, method, max)
	}
	var out Response
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%w: %s: HTTP %d: %v", ErrBadResponse, method, resp.StatusCode, err)
	}
	switch {
	case out.Error != nil:
		return nil, out.Error
	case out.Result == nil:
		return nil, fmt.Errorf("%w: %s: HTTP %d: neither result nor error", ErrBadResponse, method, resp.StatusCode)
	}
	return out.Result, nil
}

// redactURL drops a URL's query and user info from error text.
func redactURL(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if i := strings.Index(u, "@"); i >= 0 {
		if j := strings.Index(u, "://"); j >= 0 && j < i {
			u = u[:j+3] + u[i+1:]
		}
	}
	return u
}
