package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentnode/agentnode/internal/backoff"
)

// Retry policy for 429 and 5xx answers.
const (
	maxAttempts   = 4        // the first request plus three retries
	maxErrorBody  = 64 << 10 // read at most this much of an error body
	maxReplyBytes = 16 << 20 // and of a success body
)

// retrySchedule spaces the retries: 200 ms doubling, jittered, and at most
// 10 s, a server's Retry-After included.
var retrySchedule = backoff.Backoff{Min: 200 * time.Millisecond, Max: 10 * time.Second}

// Client talks to one OpenAI-compatible endpoint. It is safe for
// concurrent use and holds no goroutines.
type Client struct {
	cfg      Config
	endpoint string
	http     *http.Client
}

// New checks cfg and returns a client. It makes no request.
func New(cfg Config) (*Client, error) {
	ep, err := cfg.endpoint()
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{cfg: cfg, endpoint: ep, http: hc}, nil
}

// Model returns the configured model name.
func (c *Client) Model() string { return c.cfg.Model }

// Complete sends one chat completion request and returns the first
// choice, with tool names mapped back to req.Tools' names. A 429 or 5xx
// is retried up to three times with backoff (Retry-After honoured, capped)
// unless ctx ends first; other HTTP failures return an *HTTPError at once.
func (c *Client) Complete(ctx context.Context, req Request) (*Response, error) {
	names := make([]string, len(req.Tools))
	for i, t := range req.Tools {
		names[i] = t.Name
	}
	al := newAliases(names)
	body, err := json.Marshal(encodeRequest(c.cfg, req, al))
	if err != nil {
		return nil, fmt.Errorf("llm: encode request: %w", err)
	}
	w, err := c.postWithRetry(ctx, body)
	if err != nil {
		return nil, err
	}
	return decodeResponse(*w, al)
}

func (c *Client) postWithRetry(ctx context.Context, body []byte) (*wireResponse, error) {
	for attempt := 1; ; attempt++ {
		w, wait, err := c.post(ctx, body)
		var he *HTTPError
		if err == nil || !errors.As(err, &he) || !he.Retryable() || attempt == maxAttempts {
			if he != nil {
				he.Attempts = attempt
			}
			return w, err
		}
		if wait <= 0 {
			wait = retrySchedule.Delay(attempt - 1)
		}
		if !backoff.Sleep(ctx, min(wait, retrySchedule.Max)) {
			return nil, fmt.Errorf("llm: waiting to retry after HTTP %d: %w", he.Status, context.Cause(ctx))
		}
	}
}

// post makes one attempt. wait is the server's Retry-After, if any.
func (c *Client) post(ctx context.Context, body []byte) (w *wireResponse, wait time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("llm: build request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	hresp, err := c.http.Do(hreq)
	if err != nil {
		return nil, 0, fmt.Errorf("llm: POST %s: %w", c.endpoint, err)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode/100 != 2 {
		return nil, retryAfter(hresp.Header.Get("Retry-After")), httpError(hresp)
	}
	w = new(wireResponse)
	if err := json.NewDecoder(io.LimitReader(hresp.Body, maxReplyBytes)).Decode(w); err != nil {
		return nil, 0, fmt.Errorf("llm: decode response: %w", err)
	}
	return w, 0, nil
}

// httpError reads the provider's message: {"error":{"message":...}}
// (OpenAI, vLLM), {"error":"..."} (Ollama), else a body excerpt.
func httpError(resp *http.Response) *HTTPError {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return &HTTPError{Status: resp.StatusCode, Message: providerMessage(raw)}
}

func providerMessage(raw []byte) string {
	var obj struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var flat string
		switch {
		case json.Unmarshal(obj.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(obj.Error, &flat) == nil && flat != "":
			return flat
		case obj.Message != "":
			return obj.Message
		}
	}
	s := strings.TrimSpace(string(raw))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// retryAfter parses a Retry-After in seconds (an HTTP date is ignored).
func retryAfter(v string) time.Duration {
	secs, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || secs < 0 {
		return 0
	}
	return time.Duration(secs) * time.Second
}
