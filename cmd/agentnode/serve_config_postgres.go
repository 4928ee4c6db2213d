package main

import (
	"fmt"
	"net/url"

	"github.com/agentnode/agentnode/relay/pgstore"
)

// servePostgres is the --config "postgres" section: the database that
// holds the relay's events when several instances act as one node
// (docs/POSTGRES.md).
//
//	"postgres": {"url": "postgres://agentnode@db:5432/agentnode?sslmode=disable",
//	             "lease_ttl_seconds": 15, "advertise_url": "http://node-1:7447"}
//
// --postgres (or AGENTNODE_POSTGRES) overrides the URL. The agent daemon's
// data lives there too (agentd/cluster): each installed agent runs on one
// instance, under a lease of lease_ttl_seconds (default 15); advertise_url
// is where the other instances reach this one to forward an agent's
// requests (default: http:// and the listen address).
type servePostgres struct {
	URL             string  `json:"url"`
	LeaseTTLSeconds float64 `json:"lease_ttl_seconds"`
	AdvertiseURL    string  `json:"advertise_url"`
}

// checkPostgres wants a URL (here or from --postgres), a lease TTL that
// is not negative and an http(s) advertise URL.
func checkPostgres(f *serveFile) error {
	p := f.Postgres
	switch {
	case p.URL == "" && p.LeaseTTLSeconds == 0 && p.AdvertiseURL == "":
		return fmt.Errorf(`"postgres.url" is empty`)
	case p.URL != "": // else --postgres or AGENTNODE_POSTGRES names it
		if err := pgstore.CheckURL(p.URL); err != nil {
			return fmt.Errorf(`"postgres.url": %v`, err)
		}
	}
	if p.LeaseTTLSeconds < 0 {
		return fmt.Errorf(`"postgres.lease_ttl_seconds" is negative`)
	}
	if p.AdvertiseURL != "" {
		if err := checkAdvertiseURL(p.AdvertiseURL); err != nil {
			return fmt.Errorf(`"postgres.advertise_url": %v`, err)
		}
	}
	return nil
}

// checkAdvertiseURL accepts an http:// or https:// base URL with a host.
func checkAdvertiseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q: want an http:// or https:// URL such as http://node-1:7447", raw)
	}
	return nil
}

// postgresURL is the database the relay runs on: --postgres (or
// AGENTNODE_POSTGRES), else the file's; "" is the embedded LMDB store.
func (c *ServeCommand) postgresURL() string {
	if c.Config.Postgres != "" {
		return c.Config.Postgres
	}
	return c.conf().Postgres.URL
}

// checkPostgresFlag refuses a --postgres value that is not a PostgreSQL
// URL before anything opens.
func (c *ServeCommand) checkPostgresFlag() error {
	if c.Config.Postgres == "" {
		return nil
	}
	if err := pgstore.CheckURL(c.Config.Postgres); err != nil {
		return usagef("serve: --postgres: %v", err)
	}
	return nil
}
