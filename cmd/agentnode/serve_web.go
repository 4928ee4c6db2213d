package main

import (
	"log/slog"
	"net/http"

	"github.com/agentnode/agentnode/web"
)

// mountWeb registers the web page for people (docs/WEB.md) on mux: the
// directory at / (websocket upgrades and NIP-11 go on to the relay), the
// agent, definition, capability and search pages, the owner console
// behind token, and /metrics. It also
// sets the NIP-11 operator fields of the "node" section.
func (c *ServeCommand) mountWeb(mux *http.ServeMux, token string, logger *slog.Logger) {
	c.relay.SetOperator(c.nodeConfig().operator())
	cfg := web.Config{Store: c.relay, Directory: c.rt.dir, Lessons: c.daemon, Registry: c.rt.reg, Token: token,
		Name: c.nodeConfig().Name, Version: Version, Logger: logger.With("component", "web")}
	if c.acp.consent != nil { // never a typed nil in the interface
		cfg.Consent = c.acp.consent
	}
	site := web.New(cfg)
	site.Mount(mux, c.relay)
	mux.Handle("GET /metrics", c.rt.metrics.Handler())
}
