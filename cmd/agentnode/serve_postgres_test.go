package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentnode/agentnode/internal/pgtest"
	"github.com/agentnode/agentnode/relay/pgstore"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestServeConfig_PostgresSection: the "postgres" section sets the URL,
// --postgres and AGENTNODE_POSTGRES override it, a bad URL or an unknown
// key is refused.
func TestServeConfig_PostgresSection(t *testing.T) {
	cfg := configFile(t, map[string]any{"postgres": map[string]string{"url": "postgres://a@file/db"}})
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--config", cfg}, "", "postgres://a@file/db"},
		{[]string{"--config", cfg}, "postgres://a@env/db", "postgres://a@env/db"},
		{[]string{"--config", cfg, "--postgres", "postgres://a@flag/db"}, "postgres://a@env/db", "postgres://a@flag/db"},
		{nil, "", ""},
	} {
		sc := &ServeCommand{m: &Main{Stderr: &bytes.Buffer{}, Getenv: func(k string) string {
			if k == "AGENTNODE_POSTGRES" {
				return c.env
			}
			return ""
		}}}
		if err := sc.ParseFlags(c.args); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if got := sc.leaseTTL(); got != 15*time.Second {
			t.Errorf("%q: lease TTL %v, want the default 15s", c.args, got)
		}
		if got := sc.postgresURL(); got != c.want {
			t.Errorf("%q env %q: postgres URL %q, want %q", c.args, c.env, got, c.want)
		}
	}
	for body, want := range map[string]string{
		`{"postgres": {"url": ""}}`:                         `"postgres.url" is empty`,
		`{"postgres": {"url": "postgres://h:notaport/db"}}`: `"postgres.url"`,
		`{"postgres": {"bogus": 1}}`:                        `unknown`,
		`{"postgres": {"lease_ttl_seconds": -1}}`:           `negative`,
		`{"postgres": {"advertise_url": "ws://x:1"}}`:       `"postgres.advertise_url"`,
	} {
		if err := parseServeFile([]byte(body), &serveFile{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %s", body, err, want)
		}
	}
}

// TestServeConfig_PostgresLease: --lease-ttl overrides the file's
// lease_ttl_seconds; a file with only lease settings is accepted (the URL
// comes from --postgres or the environment).
func TestServeConfig_PostgresLease(t *testing.T) {
	cfg := configFile(t, map[string]any{"postgres": map[string]any{"lease_ttl_seconds": 3, "advertise_url": "http://node-1:7447"}})
	for args, want := range map[string]time.Duration{"": 3 * time.Second, "--lease-ttl=500ms": 500 * time.Millisecond} {
		sc := &ServeCommand{m: &Main{Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}}
		argv := []string{"--config", cfg}
		if args != "" {
			argv = append(argv, args)
		}
		if err := sc.ParseFlags(argv); err != nil {
			t.Fatal(err)
		}
		if got := sc.leaseTTL(); got != want {
			t.Errorf("%q: lease TTL %v, want %v", argv, got, want)
		}
		if got := sc.advertiseURL(); got != "http://node-1:7447" {
			t.Errorf("advertise URL %q", got)
		}
	}
}

// TestServe_PostgresRefusals: serve refuses to start, saying why, when the
// database cannot be reached and when its schema is newer than the binary.
func TestServe_PostgresRefusals(t *testing.T) {
	open := func(url string) error {
		sc := &ServeCommand{m: &Main{Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}}
		if err := sc.ParseFlags([]string{"--postgres", url, "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--log-level", "error"}); err != nil {
			t.Fatal(err)
		}
		err := sc.Open(context.Background())
		sc.Close(context.Background())
		return err
	}
	if err := open("postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"); err == nil || !strings.Contains(err.Error(), "postgres unreachable") {
		t.Errorf("unreachable database: %v", err)
	}
	url := pgtest.URL(t)
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `INSERT INTO pgstore_schema VALUES ($1)`, pgstore.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if err := open(url); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("newer schema: %v", err)
	}
}
