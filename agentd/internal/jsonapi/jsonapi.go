// Package jsonapi is the transport the node's HTTP API clients share
// (agentd.Client, consent.Client): one JSON request with the node's bearer
// token, the answer read whole (bounded). Each client decodes its own
// error shape from the status and body.
//
//	status, body, err := jsonapi.Do(ctx, nil, http.MethodGet, base+"/api/agents", token, nil)
package jsonapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// MaxAnswer bounds the answer read.
const MaxAnswer = 64 << 20

// Do sends method url with in as JSON (none when nil) and token as the
// bearer (none when empty) through hc (http.DefaultClient when nil), and
// returns the answer's status and body. err is a transport failure only.
func Do(ctx context.Context, hc *http.Client, method, url, token string, in any) (int, []byte, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0, nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer))
	return resp.StatusCode, b, err
}

// URL joins a base URL and a path.
func URL(base, path string) string { return strings.TrimRight(base, "/") + path }
