package blossom

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// authTTL is how long the client's authorization events are valid.
const authTTL = 5 * time.Minute

// Client speaks to one Blossom server. SecretKey signs the authorization
// events (hex); HTTP defaults to http.DefaultClient.
type Client struct {
	BaseURL   string
	SecretKey string
	HTTP      *http.Client
}

// HTTPError is a server's refusal: its status and X-Reason.
type HTTPError struct {
	Status int
	Reason string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("blossom: server answered %d: %s", e.Status, e.Reason)
}

// UploadFile uploads the file at path.
func (c *Client) UploadFile(ctx context.Context, path, typ string) (Descriptor, error) {
	sha, size, err := HashFile(path)
	if err != nil {
		return Descriptor{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Descriptor{}, fmt.Errorf("blossom: %w", err)
	}
	defer f.Close()
	return c.Upload(ctx, f, size, sha, typ)
}

// Upload sends size bytes of r, whose SHA-256 is sha, as a blob of type typ.
func (c *Client) Upload(ctx context.Context, r io.Reader, size int64, sha, typ string) (Descriptor, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.url("/upload"), r)
	if err != nil {
		return Descriptor{}, fmt.Errorf("blossom: %w", err)
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", typ)
	req.Header.Set("X-SHA-256", sha)
	if err := c.sign(req, "upload", "Upload "+sha, sha); err != nil {
		return Descriptor{}, err
	}
	var d Descriptor
	return d, c.do(req, &d)
}

// List is every descriptor of pubkey, page by page, at most max of them.
func (c *Client) List(ctx context.Context, pubkey string, max int) ([]Descriptor, error) {
	var all []Descriptor
	cursor := ""
	for len(all) < max {
		q := url.Values{"limit": {fmt.Sprint(min(max-len(all), MaxListLimit))}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url("/list/"+pubkey+"?"+q.Encode()), nil)
		if err != nil {
			return nil, fmt.Errorf("blossom: %w", err)
		}
		var page []Descriptor
		resp, err := c.send(req, &page)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if cursor = resp.Header.Get("X-Next-Cursor"); cursor == "" || len(page) == 0 {
			break
		}
	}
	return all, nil
}

// Delete drops the signer's hold on the blob sha.
func (c *Client) Delete(ctx context.Context, sha string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url("/"+sha), nil)
	if err != nil {
		return fmt.Errorf("blossom: %w", err)
	}
	if err := c.sign(req, "delete", "Delete "+sha, sha); err != nil {
		return err
	}
	return c.do(req, nil)
}

// Get writes the blob sha to w (at most max bytes), verifying its hash.
func (c *Client) Get(ctx context.Context, sha string, w io.Writer, max int64) error {
	return Fetch(ctx, c.client(), c.url("/"+sha), sha, -1, max, w)
}

// Fetch GETs u with hc and copies the body to w (Verify). On error w may
// hold part of the body: write to a temporary file and keep it only on
// success.
func Fetch(ctx context.Context, hc *http.Client, u, sha string, size, max int64, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("blossom: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("blossom: fetch %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &HTTPError{Status: resp.StatusCode, Reason: resp.Header.Get("X-Reason")}
	}
	return Verify(resp.Body, sha, size, max, w)
}

// Verify copies r to w, refusing more than max bytes, a size other than
// size (size < 0: any) and bytes that do not hash to sha.
func Verify(r io.Reader, sha string, size, max int64, w io.Writer) error {
	if size >= 0 && size < max {
		max = size
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(r, max+1))
	switch {
	case err != nil:
		return fmt.Errorf("blossom: read: %w", err)
	case size >= 0 && n != size:
		return fmt.Errorf("%w: %d bytes or more, want %d", ErrHashMismatch, n, size)
	case n > max:
		return fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		return fmt.Errorf("%w: the bytes hash to %s, want %s", ErrHashMismatch, got, sha)
	}
	return nil
}

// HashFile is the SHA-256 and size of the file at path.
func HashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("blossom: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("blossom: read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// sign adds a signed authorization for verb to req.
func (c *Client) sign(req *http.Request, verb, content string, xs ...string) error {
	evt := AuthTemplate(verb, content, authTTL, xs...)
	if err := evt.Sign(c.SecretKey); err != nil {
		return fmt.Errorf("blossom: sign: %w", err)
	}
	req.Header.Set("Authorization", AuthHeader(&evt))
	return nil
}

// do sends req and decodes a JSON answer into v (nil: ignore the body).
func (c *Client) do(req *http.Request, v any) error {
	_, err := c.send(req, v)
	return err
}

// send sends req, turns a refusal into *HTTPError and decodes at most
// 16 MiB of JSON into v.
func (c *Client) send(req *http.Request, v any) (*http.Response, error) {
	resp, err := c.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("blossom: %s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		reason := resp.Header.Get("X-Reason")
		if reason == "" {
			b, _ := readLimited(resp.Body, 512)
			reason = strings.TrimSpace(string(b))
		}
		return resp, &HTTPError{Status: resp.StatusCode, Reason: reason}
	}
	if v == nil {
		return resp, nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(v); err != nil {
		return resp, fmt.Errorf("blossom: %s %s: bad answer: %w", req.Method, req.URL.Path, err)
	}
	return resp, nil
}

func (c *Client) client() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// url is the server's path p.
func (c *Client) url(p string) string {
	return strings.TrimSuffix(c.BaseURL, "/") + p
}
