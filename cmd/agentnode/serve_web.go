package main

import (
	"log/slog"
	"net/http"

	"github.com/agentnode/agentnode/web"
)

// mountWeb registers the web page for people (docs/WEB.md) on mux: the
// directory at / (websocket upgrades and NIP-11 go on to the relay), the
// agent, definition, capability and search pages, and /metrics. It also
// sets the NIP-11 operator fields of the "node" section.
func (c *ServeCommand) mountWeb(mux *http.ServeMux, logger *slog.Logger) {
	c.relay.SetOperator(c.nodeConfig().operator())
	site := web.New(web.Config{Store: c.relay, Directory: c.rt.dir, Lessons: c.daemon, Registry: c.rt.reg,
		Name: c.nodeConfig().Name, Version: Version, Logger: logger.With("component", "web")})
	site.Mount(mux, c.relay)
	mux.Handle("GET /metrics", c.rt.metrics.Handler())
}
