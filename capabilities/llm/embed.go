package llm

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

// Embedding bounds: inputs per request and bytes per input (longer inputs
// are cut: a trigger or a chat message is embedded for routing, not
// stored).
const (
	MaxEmbedInputs     = 256
	MaxEmbedInputBytes = 8 << 10
)

// ErrEmbedding: the endpoint's answer is not one vector per input.
var ErrEmbedding = errors.New("llm: bad embeddings answer")

// Embed asks the endpoint's OpenAI-compatible POST {BaseURL}/embeddings
// for model's vectors of inputs (at most MaxEmbedInputs, each cut to
// MaxEmbedInputBytes), in input order. One attempt, bounded by the
// client's timeout; HTTP failures are *HTTPError.
func (c *Client) Embed(ctx context.Context, model string, inputs []string) ([][]float64, error) {
	if len(inputs) == 0 || len(inputs) > MaxEmbedInputs {
		return nil, fmt.Errorf("llm: embed %d inputs (1 to %d)", len(inputs), MaxEmbedInputs)
	}
	cut := make([]string, len(inputs))
	for i, s := range inputs {
		cut[i] = truncateUTF8(s, MaxEmbedInputBytes)
	}
	body, err := json.Marshal(map[string]any{"model": model, "input": cut})
	if err != nil {
		return nil, err
	}
	raw, err := c.postJSON(ctx, strings.TrimSuffix(c.endpoint, "/chat/completions")+"/embeddings", body)
	if err != nil {
		return nil, err
	}
	return decodeEmbeddings(raw, len(inputs))
}

// decodeEmbeddings reads {"data":[{"index":i,"embedding":[...]}]}.
func decodeEmbeddings(raw []byte, n int) ([][]float64, error) {
	var w struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &w); err != nil || len(w.Data) != n {
		return nil, ErrEmbedding
	}
	out := make([][]float64, n)
	for _, d := range w.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil || len(d.Embedding) == 0 {
			return nil, ErrEmbedding
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// postJSON makes one POST of body to url and returns the 2xx body.
func (c *Client) postJSON(ctx context.Context, url string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("llm: build request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	hresp, err := c.http.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("llm: POST %s: %w", url, err)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode/100 != 2 {
		return nil, httpError(hresp)
	}
	return io.ReadAll(io.LimitReader(hresp.Body, maxReplyBytes))
}

// truncateUTF8 cuts s to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
