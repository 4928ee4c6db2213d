package main

import (
	"bytes"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agentnode/agentnode/relay/pgstore"
)

// scaleCompose is the part of docker-compose.yml's "scale" profile the
// test checks.
type scaleCompose struct {
	Services map[string]struct {
		Profiles    []string          `yaml:"profiles"`
		Image       string            `yaml:"image"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Volumes     []string          `yaml:"volumes"`
		StopSignal  string            `yaml:"stop_signal"`
		DependsOn   any               `yaml:"depends_on"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// TestDockerCompose_ScaleProfile checks the "scale" profile against the
// binary's real serve FlagSet and config parser: each instance's command
// line and --config file are accepted, every variable is one serve reads,
// AGENTNODE_POSTGRES names the postgres service with its user, password
// and database, each data dir is its own named volume, and the proxy's
// upstreams are exactly the instances' listen addresses.
func TestDockerCompose_ScaleProfile(t *testing.T) {
	root := filepath.Join("..", "..")
	raw, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cf scaleCompose
	if err := yaml.Unmarshal(raw, &cf); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	pg, ok := cf.Services["postgres"]
	if !ok || !slices.Contains(pg.Profiles, "scale") {
		t.Fatal("no postgres service in the scale profile")
	}
	var upstreams []string
	for _, name := range []string{"agentnode-1", "agentnode-2"} {
		svc, ok := cf.Services[name]
		if !ok || !slices.Contains(svc.Profiles, "scale") {
			t.Fatalf("no %s service in the scale profile", name)
		}
		args := slices.Clone(svc.Command)
		if len(args) == 0 || args[0] != "serve" {
			t.Fatalf("%s: command = %q, want serve ...", name, args)
		}
		mapMounted(t, root, args, svc.Volumes)
		env := map[string]string{}
		for k, v := range svc.Environment {
			env[k] = expandDefaults(v)
		}
		c := &ServeCommand{m: &Main{Stderr: &bytes.Buffer{}, Getenv: func(k string) string { return env[k] }}}
		if err := c.ParseFlags(args[1:]); err != nil {
			t.Fatalf("%s: serve rejects the compose command line: %v", name, err)
		}
		cfg, pgURL := c.Config, c.postgresURL()
		checkComposeEnv(t, c.FlagSet(), svc.Environment)
		checkPostgresURL(t, name, pgURL, pg.Environment)
		checkComposeVolume(t, cfg.DataDir, svc.Volumes, cf.Volumes)
		if len(c.httpConfig().trusted) == 0 {
			t.Errorf("%s trusts no proxy: every client would share the proxy's per-IP rate limit", name)
		}
		if svc.StopSignal != "SIGTERM" {
			t.Errorf("%s: stop_signal = %q", name, svc.StopSignal)
		}
		_, port, err := net.SplitHostPort(cfg.Listen)
		if err != nil {
			t.Fatal(err)
		}
		upstreams = append(upstreams, name+":"+port)
		// Agents run on both: each advertises its own address to the other
		// (requests for its agents are forwarded there), with the lease TTL
		// of the config file.
		if got, want := c.advertiseURL(), "http://"+name+":"+port; got != want {
			t.Errorf("%s advertises %q, want %q", name, got, want)
		}
		if got := c.leaseTTL(); got != 15*time.Second {
			t.Errorf("%s: lease TTL %v, want 15s", name, got)
		}
	}
	checkProxy(t, root, cf.Services["proxy"].Volumes, cf.Services["proxy"].Profiles, upstreams)
}

// mapMounted rewrites a --config path inside the container to the
// repository file mounted there.
func mapMounted(t *testing.T, root string, args, volumes []string) {
	t.Helper()
	for i := 0; i+1 < len(args); i++ {
		if args[i] != "--config" {
			continue
		}
		for _, v := range volumes {
			parts := strings.Split(v, ":")
			if len(parts) >= 2 && parts[1] == args[i+1] && strings.HasPrefix(parts[0], "./") {
				args[i+1] = filepath.Join(root, parts[0])
			}
		}
		if _, err := os.Stat(args[i+1]); err != nil {
			t.Fatalf("--config %s is not mounted from a file of the repository", args[i+1])
		}
	}
}

var composeDefault = regexp.MustCompile(`\$\{[A-Z_]+:-([^}]*)\}`)

// expandDefaults replaces ${VAR:-default} by its default.
func expandDefaults(s string) string { return composeDefault.ReplaceAllString(s, "$1") }

// checkPostgresURL: the URL parses and names the postgres service and its
// user, password and database.
func checkPostgresURL(t *testing.T, name, raw string, pgEnv map[string]string) {
	t.Helper()
	if raw == "" {
		t.Fatalf("%s: no PostgreSQL URL (AGENTNODE_POSTGRES)", name)
	}
	if err := pgstore.CheckURL(raw); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := u.User.Password()
	if u.Hostname() != "postgres" || u.User.Username() != pgEnv["POSTGRES_USER"] ||
		pass != expandDefaults(pgEnv["POSTGRES_PASSWORD"]) || strings.TrimPrefix(u.Path, "/") != pgEnv["POSTGRES_DB"] {
		t.Errorf("%s: AGENTNODE_POSTGRES %s does not name the postgres service's user, password and database", name, u.Redacted())
	}
}

// checkProxy: the proxy mounts an nginx.conf of the repository whose
// upstream servers are exactly the instances.
func checkProxy(t *testing.T, root string, volumes, profiles, upstreams []string) {
	t.Helper()
	if !slices.Contains(profiles, "scale") {
		t.Fatal("no proxy service in the scale profile")
	}
	var conf string
	for _, v := range volumes {
		if src, dst, _ := strings.Cut(v, ":"); strings.HasPrefix(dst, "/etc/nginx/nginx.conf") {
			b, err := os.ReadFile(filepath.Join(root, src))
			if err != nil {
				t.Fatalf("proxy config: %v", err)
			}
			conf = string(b)
		}
	}
	var servers []string
	for _, m := range regexp.MustCompile(`(?m)^\s*server\s+([^\s;]+);`).FindAllStringSubmatch(conf, -1) {
		servers = append(servers, m[1])
	}
	slices.Sort(servers)
	slices.Sort(upstreams)
	if !slices.Equal(servers, upstreams) {
		t.Errorf("proxy upstreams %q, want the instances %q", servers, upstreams)
	}
	if !strings.Contains(conf, "proxy_set_header Upgrade") {
		t.Error("the proxy does not pass websocket upgrades")
	}
}
