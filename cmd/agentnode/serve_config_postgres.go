package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentnode/agentnode/relay/pgstore"
)

// servePostgres is the --config "postgres" section: the database that
// holds the relay's events when several instances act as one node
// (docs/POSTGRES.md).
//
//	"postgres": {"url": "postgres://agentnode@db:5432/agentnode?sslmode=disable"}
//
// --postgres (or AGENTNODE_POSTGRES) overrides it. The agent daemon's own
// files stay in --data.
type servePostgres struct {
	URL string `json:"url"`
}

// parsePostgresSection decodes the "postgres" section and checks its URL.
func parsePostgresSection(top map[string]json.RawMessage, f *serveFile) error {
	raw, ok := top["postgres"]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f.Postgres); err != nil {
		return fmt.Errorf(`"postgres": %v`, jsonFieldError(err))
	}
	if f.Postgres.URL == "" {
		return fmt.Errorf(`"postgres.url" is empty`)
	}
	if err := pgstore.CheckURL(f.Postgres.URL); err != nil {
		return fmt.Errorf(`"postgres.url": %v`, err)
	}
	return nil
}

// postgresURL is the database the relay runs on: --postgres (or
// AGENTNODE_POSTGRES), else the file's; "" is the embedded LMDB store.
func (c *ServeCommand) postgresURL() string {
	if c.Config.Postgres != "" || c.file == nil {
		return c.Config.Postgres
	}
	return c.file.Postgres.URL
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
