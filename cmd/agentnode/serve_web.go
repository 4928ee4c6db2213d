package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/web"
)

// mountWeb registers the web page for people (docs/WEB.md) on mux: the
// directory at / (websocket upgrades and NIP-11 go on to the relay), the
// agent, definition, capability and search pages, the owner console
// behind token, and /metrics. It also
// sets the NIP-11 operator fields of the "node" section.
func (c *ServeCommand) mountWeb(mux *http.ServeMux, token string, logger *slog.Logger) {
	c.relay.SetOperator(c.nodeConfig().operator())
	var wc serveWeb
	if c.file != nil {
		wc = c.file.Web
	}
	cfg := web.Config{Store: c.relay, Directory: c.rt.dir, Lessons: c.daemon, Registry: c.rt.reg, Token: token,
		TokenFile: agentd.TokenPath(c.Config.DataDir), Name: c.nodeConfig().Name, Version: Version, Logger: logger.With("component", "web"),
		MaxRenders: wc.MaxRenders, RenderWait: time.Duration(wc.RenderWaitMillis) * time.Millisecond}
	cfg.Files = c.webFiles    // serve_blossom.go
	if c.acp.consent != nil { // never a typed nil in the interface
		cfg.Consent = c.acp.consent
	}
	if c.daemon != nil {
		cfg.Installed = c.daemon
		cfg.MCP = c.daemon // kind-4200 servers in the console
	}
	site := web.New(cfg)
	site.Mount(mux, c.relay)
	mux.Handle("GET /metrics", c.rt.metrics.Handler())
}

// serveWeb is the --config "web" section (docs/WEB.md#bounds): how many
// pages are built at once and how long a request waits for a turn before
// it gets 503. Zero: the defaults (4, 2000 ms).
type serveWeb struct {
	MaxRenders       int `json:"max_renders"`
	RenderWaitMillis int `json:"render_wait_ms"`
}

// parseWebSection reads the "web" section: unknown keys and negative
// values are refused.
func parseWebSection(top map[string]json.RawMessage, f *serveFile) error {
	raw, ok := top["web"]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f.Web); err != nil {
		return fmt.Errorf(`"web": %v`, err)
	}
	if f.Web.MaxRenders < 0 || f.Web.RenderWaitMillis < 0 {
		return fmt.Errorf(`"web": max_renders and render_wait_ms must not be negative`)
	}
	return nil
}
