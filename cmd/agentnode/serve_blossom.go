package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/blossom"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/httplimit"
	"github.com/agentnode/agentnode/web"
)

// serveBlossom is the --config "blossom" section: the node's Blossom
// server (docs/BLOSSOM.md). Zero or absent fields take the defaults.
//
//	"blossom": {"dir": "/shared/blobs", "base_url": "https://node.example",
//	            "max_blob_bytes": 268435456, "max_uploads": 4,
//	            "quota_bytes_per_uploader": 1073741824, "quota_blobs_per_uploader": 10000,
//	            "quota_bytes_total": 10737418240, "uploaders": "node" | "anyone" | "none",
//	            "allow": ["npub1..."], "fetch_allow_private": false, "fetch_allow_hosts": ["files.intranet"]}
type serveBlossom struct {
	Dir                   string   `json:"dir"`
	BaseURL               string   `json:"base_url"`
	MaxBlobBytes          int64    `json:"max_blob_bytes"`
	MaxUploads            int      `json:"max_uploads"`
	QuotaBytesPerUploader int64    `json:"quota_bytes_per_uploader"`
	QuotaBlobsPerUploader int      `json:"quota_blobs_per_uploader"`
	QuotaBytesTotal       int64    `json:"quota_bytes_total"`
	Uploaders             string   `json:"uploaders"`
	Allow                 []string `json:"allow"`
	FetchAllowPrivate     bool     `json:"fetch_allow_private"`
	FetchAllowHosts       []string `json:"fetch_allow_hosts"`

	allow []string // Allow as hex
}

// Defaults of the "blossom" section.
const (
	defaultBlobQuotaPerUploader = 1 << 30  // 1 GiB
	defaultBlobCountPerUploader = 10000    // bounds a list and a quota count
	defaultBlobQuotaTotal       = 10 << 30 // 10 GiB
)

// parseBlossomSection decodes and checks the "blossom" section.
func parseBlossomSection(top map[string]json.RawMessage, f *serveFile) error {
	raw, ok := top["blossom"]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f.Blossom); err != nil {
		return fmt.Errorf(`"blossom": %v`, jsonFieldError(err))
	}
	return f.Blossom.check()
}

// check refuses negative bounds and unknown uploader policies and
// parses the allow-list.
func (b *serveBlossom) check() error {
	if b.MaxBlobBytes < 0 || b.MaxUploads < 0 || b.QuotaBytesPerUploader < 0 || b.QuotaBlobsPerUploader < 0 || b.QuotaBytesTotal < 0 {
		return fmt.Errorf(`"blossom": bounds must not be negative (0 or absent: the default)`)
	}
	switch b.Uploaders {
	case "", "node", "anyone", "none":
	default:
		return fmt.Errorf(`"blossom.uploaders" %q: want "node" (the default: the node's agents, their owners, their definitions' authors and "allow"), "anyone" or "none" ("allow" only)`, b.Uploaders)
	}
	b.allow = nil
	for _, a := range b.Allow {
		pk, err := events.ParsePubKey(a)
		if err != nil {
			return fmt.Errorf(`"blossom.allow" %q: %v`, a, err)
		}
		b.allow = append(b.allow, pk)
	}
	return nil
}

// blossomConfig is the "blossom" section in force.
func (c *ServeCommand) blossomConfig() serveBlossom {
	if c.file == nil {
		return serveBlossom{}
	}
	return c.file.Blossom
}

// blobDir is where blobs live: --blobs, else the section's dir, else
// <data>/blobs.
func (c *ServeCommand) blobDir() string {
	if c.Config.Blobs != "" {
		return c.Config.Blobs
	}
	if d := c.blossomConfig().Dir; d != "" {
		return d
	}
	return filepath.Join(c.Config.DataDir, "blobs")
}

// blobFetcher is the SSRF-guarded client of mirrors and of installs'
// file fetches.
func (c *ServeCommand) blobFetcher() *http.Client {
	b := c.blossomConfig()
	return bindings.GuardedClient(b.FetchAllowPrivate, b.FetchAllowHosts)
}

// openBlossom opens the blob store and builds the Blossom server that
// mountEndpoints puts in front of the relay.
func (c *ServeCommand) openBlossom(_ context.Context, logger *slog.Logger) error {
	b := c.blossomConfig()
	st, err := blossom.OpenStore(c.blobDir(), blossom.Quota{
		BytesPerUploader: orDefault(b.QuotaBytesPerUploader, defaultBlobQuotaPerUploader),
		BlobsPerUploader: int(orDefault(int64(b.QuotaBlobsPerUploader), defaultBlobCountPerUploader)),
		TotalBytes:       orDefault(b.QuotaBytesTotal, defaultBlobQuotaTotal)})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	c.blobs = blossom.NewServer(st, blossom.Options{BaseURL: b.BaseURL, MaxBlobBytes: b.MaxBlobBytes,
		MaxUploads: b.MaxUploads, MayUpload: c.mayUpload, UploadPolicy: b.policy(), Fetch: c.blobFetcher()})
	c.blobStore = st
	logger.Info("blossom server", "dir", st.Dir(), "uploaders", b.policy())
	return nil
}

func orDefault(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}

// policy is the sentence a refused uploader reads.
func (b serveBlossom) policy() string {
	switch b.Uploaders {
	case "anyone":
		return "this node takes uploads from anyone"
	case "none":
		return "this node takes uploads only from the keys its operator allowed"
	}
	return "this node takes uploads from its agents, their owners, the authors of their definitions and the keys its operator allowed"
}

// mayUpload is the uploader allow-list (serveBlossom.Uploaders).
func (c *ServeCommand) mayUpload(_ context.Context, pk string) bool {
	b := c.blossomConfig()
	switch {
	case b.Uploaders == "anyone", contains(b.allow, pk), pk == c.nodeConfig().PubKey:
		return true
	case b.Uploaders == "none" || c.daemon == nil:
		return false
	}
	for _, a := range c.daemon.List() {
		if a.PubKey == pk || a.Owner == pk || definitionAuthor(a) == pk {
			return true
		}
	}
	return false
}

// definitionAuthor is the author of a's definition (DefinitionKey is
// author:slug or author:title).
func definitionAuthor(a agentd.Agent) string {
	author, _, _ := strings.Cut(a.DefinitionKey, ":")
	return author
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// bodyBound is httplimit.Body(max) except for Blossom uploads, whose
// body the Blossom server bounds itself ("blossom.max_blob_bytes").
func bodyBound(max int64, next http.Handler) http.Handler {
	bounded := httplimit.Body(max, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Path == "/upload" {
			next.ServeHTTP(w, r)
			return
		}
		bounded.ServeHTTP(w, r)
	})
}

// defFiles is how installs fetch definitions' files: through the
// SSRF-guarded client, else from the node's own blobs.
func (c *ServeCommand) defFiles() agentd.DefFiles {
	return agentd.DefFiles{HTTP: c.blobFetcher(), MaxBytes: c.blossomConfig().MaxBlobBytes,
		Local: func(sha string) (io.ReadCloser, error) {
			f, _, err := c.blobStore.Open(sha)
			return f, err
		}}
}

// webFiles are a local agent's definition files for its web page.
func (c *ServeCommand) webFiles(_ context.Context, agent string) ([]web.File, error) {
	files, err := c.daemon.Files(agent)
	out := make([]web.File, 0, len(files))
	for _, f := range files {
		out = append(out, web.File{Name: f.Name, SHA256: f.SHA256, Size: f.Size})
	}
	return out, err
}
