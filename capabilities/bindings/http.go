package bindings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/internal/netguard"
	"github.com/agentnode/agentnode/internal/redact"
)

// maxRedirects bounds the redirects an HTTP binding follows.
const maxRedirects = 5

// newHTTPClient returns a client whose every connection passes g, that
// uses no proxy (a proxy would dial on our behalf, past the guard) and
// that follows only http(s) redirects.
func newHTTPClient(g *netguard.Policy) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         g.DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        32,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &http.Client{Transport: tr, CheckRedirect: checkRedirect}
}

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return capabilities.Errorf(capabilities.CodeExecutionFailed, "more than %d redirects", maxRedirects)
	}
	return checkScheme(req.URL)
}

// checkScheme refuses anything but http and https.
func checkScheme(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return capabilities.Errorf(capabilities.CodePermissionDenied, "scheme %q is not allowed: only http and https", u.Scheme)
	}
	return nil
}

// httpGet sends the arguments as query parameters.
func (r *Runner) httpGet(ctx context.Context, c Call) (json.RawMessage, error) {
	u, err := bindingURL(c)
	if err != nil {
		return nil, err
	}
	q, err := queryFromArgs(c.Args)
	if err != nil {
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "tool %s: %s", c.Tool, err)
	}
	merged := u.Query()
	for k, vs := range q {
		merged[k] = append(merged[k], vs...)
	}
	u.RawQuery = merged.Encode()
	return r.doHTTP(ctx, c.Tool, http.MethodGet, u, nil)
}

// httpPost sends the arguments as a JSON body.
func (r *Runner) httpPost(ctx context.Context, c Call) (json.RawMessage, error) {
	u, err := bindingURL(c)
	if err != nil {
		return nil, err
	}
	body := []byte(c.Args)
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if !json.Valid(body) {
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "tool %s: arguments are not valid JSON", c.Tool)
	}
	return r.doHTTP(ctx, c.Tool, http.MethodPost, u, body)
}

// bindingURL parses and checks the binding's url.
func bindingURL(c Call) (*url.URL, error) {
	u, err := url.Parse(c.Binding.URL)
	if err == nil && u.Scheme != "" {
		if err := checkScheme(u); err != nil {
			return nil, err
		}
	}
	if err != nil || u.Host == "" {
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "tool %s: binding url %q is not an absolute URL", c.Tool, redact.URL(c.Binding.URL))
	}
	return u, nil
}

// doHTTP sends one request and turns the response into the tool result.
func (r *Runner) doHTTP(ctx context.Context, tool, method string, u *url.URL, body []byte) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.HTTPTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "tool %s: %s", tool, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "agentnode-bindings")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, httpError(tool, u, err)
	}
	defer resp.Body.Close()
	data, err := readCapped(resp.Body, r.cfg.MaxResponseBytes)
	if err != nil {
		return nil, httpError(tool, u, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, capabilities.Errorf(capabilities.CodeExecutionFailed, "tool %s: %s answered HTTP %s", tool, u.Host, resp.Status)
	}
	return renderResponse(resp, data), nil
}

// errTooLarge is a response body over the cap.
var errTooLarge = errors.New("response too large")

func readCapped(body io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(body, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: more than %d bytes", errTooLarge, max)
	}
	return data, nil
}

// httpError codes a failed request.
func httpError(tool string, u *url.URL, err error) error {
	var (
		blocked *BlockedError
		ce      *capabilities.Error
	)
	switch {
	case errors.As(err, &blocked):
		return &capabilities.Error{Code: capabilities.CodePermissionDenied, Message: fmt.Sprintf("tool %s: %s", tool, blocked.Error()), Err: err}
	case errors.As(err, &ce):
		return ce
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return &capabilities.Error{Code: capabilities.CodeTimeout, Message: fmt.Sprintf("tool %s: %s did not answer in time", tool, u.Host), Err: err}
	case errors.Is(err, errTooLarge):
		return &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: fmt.Sprintf("tool %s: %s", tool, err), Err: err}
	}
	return &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: fmt.Sprintf("tool %s: request to %s failed", tool, u.Host), Err: err}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// renderResponse returns a JSON body as is, anything else wrapped.
func renderResponse(resp *http.Response, data []byte) json.RawMessage {
	ct := resp.Header.Get("Content-Type")
	if isJSONType(ct) && json.Valid(data) {
		return data
	}
	out, _ := json.Marshal(struct {
		Status      int    `json:"status"`
		ContentType string `json:"content_type"`
		Body        string `json:"body"`
	}{resp.StatusCode, ct, string(data)})
	return out
}

func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}
