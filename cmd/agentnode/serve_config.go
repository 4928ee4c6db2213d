package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/lessons"
)

// serveFile is serve's --config file (JSON), as read by ParseFlags:
//
//	{"trust":    {"enable": [...], "disable": [...], "allowlist": [...], "follow_hop": false},
//	 "model":    {"base_url": "http://localhost:11434/v1", "model": "llama3.1", "api_key_env": "OPENAI_API_KEY"},
//	 "bindings": {"allow_private": false, "allow_hosts": ["intranet.example"],
//	              "mcp": {"did:nuwa:mcp:webscraper:version1": {"command": ["node", "server.js"], "env": ["K=V"]},
//	                      "did:nuwa:mcp:vision": {"url": "https://mcp.example/mcp"}}},
//	 "consent":  {"require": ["delegate.remote"]},
//	 "dm":       {"from": "anyone" | "owner" | "allowlist", "allow": ["npub1..."]},
//	 "a2a":      {"from": "anyone" | "owner" | "allowlist", "allow": ["npub1..."]},
//	 "strangers": {"per_sender": {"burst": 3, "every_seconds": 600}, "per_agent": {"burst": 20, "every_seconds": 60},
//	               "global": {"burst": 100, "every_seconds": 10}},
//	 "directory": {"heartbeat_seconds": 30, "ttl_seconds": 90},
//	 "web":      {"max_renders": 4, "render_wait_ms": 2000},
//	 "postgres": {"url": "postgres://agentnode@db:5432/agentnode"},
//	 "relay":    {"events_per_second": 200, "max_subscriptions": 200, "max_outbound_bytes": 8388608, ...,
//	              "operators": ["npub1..."], "agent_kinds_only": false},
//	 "node":     {"name": "...", "pubkey": "npub1...", "public_url": "wss://...", "log_level": "info"},
//	 "http":     {"trusted_proxies": ["10.0.0.0/8"], "max_body_bytes": 1048576,
//	              "read_timeout_seconds": 30, "write_timeout_seconds": 60, "long_write_timeout_seconds": 600,
//	              "idle_timeout_seconds": 120, "mcp_session_idle_seconds": 1800, "mcp_max_sessions": 1000,
//	              "mcp_max_sessions_per_ip": 64, "mcp_session_unused_seconds": 60,
//	              "jsonrpc_max_batch": 100, "jsonrpc_max_response_bytes": 4194304}}
//
// (the "relay" keys are serveRelay's, in serve_config_relay.go; the "http"
// values shown are the defaults, serve_http.go, and trusted_proxies
// defaults to none).
//
// Every key is optional; an unknown key, at any level, is refused.
type serveFile struct {
	Trust     lessons.Config `json:"trust"`
	Model     serveModel     `json:"model"`
	Bindings  serveBindings  `json:"bindings"`
	Consent   consent.Policy `json:"consent"`
	DM        serveSenders   `json:"dm"`
	A2A       serveSenders   `json:"a2a"`
	Strangers serveStrangers `json:"strangers"` // serve_strangers.go
	ContextVM serveContextVM `json:"contextvm"` // serve_contextvm.go
	Directory serveDirectory `json:"directory"`
	HTTP      serveHTTP      `json:"http"`
	Relay     serveRelay     `json:"relay"`
	Node      serveNode      `json:"node"`     // serve_config_node.go
	Web       serveWeb       `json:"web"`      // serve_web.go
	Postgres  servePostgres  `json:"postgres"` // serve_config_postgres.go
	Blossom   serveBlossom   `json:"blossom"`  // serve_blossom.go
	Routing   serveRouting   `json:"-"`        // "models", "router": serve_config_models.go

	State serveStateConfig `json:"state"` // serve_config_state.go

	// followsFlag: --trust-follows was given (either value), overriding
	// what the file says about the follows rule.
	followsFlag bool
}

// serveFileKeys are the keys a --config file may hold, per section.
var serveFileKeys = map[string][]string{
	"":      {"trust", "model", "bindings", "consent", "dm", "a2a", "strangers", "contextvm", "directory", "relay", "http", "state", "node", "models", "router", "postgres", "web", "blossom"},
	"trust": {"enable", "disable", "allowlist", "follow_hop"},
}

// readConfigFile reads --config (or AGENTNODE_CONFIG) after the flags
// were parsed; without one, the flags alone set the policy.
func (c *ServeCommand) readConfigFile(fs *flag.FlagSet) error {
	if err := c.checkPostgresFlag(); err != nil {
		return err
	}
	f := &serveFile{}
	fs.Visit(func(fl *flag.Flag) { f.followsFlag = f.followsFlag || fl.Name == "trust-follows" })
	if c.Config.ConfigFile != "" {
		b, err := os.ReadFile(c.Config.ConfigFile)
		if err != nil {
			return usagef("serve: --config: %v", err)
		}
		if err := parseServeFile(b, f); err != nil {
			return usagef("serve: --config %s: %v", c.Config.ConfigFile, err)
		}
	}
	c.file = f
	return nil
}

// parseServeFile decodes b into f, refusing unknown keys by name and
// checking the trust section on its own.
func parseServeFile(b []byte, f *serveFile) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if err := checkKeys("", top); err != nil {
		return err
	}
	if err := parseRuntimeSections(top, f); err != nil {
		return err
	}
	if err := parseContextVMSection(top, f); err != nil {
		return err
	}
	if err := parseRelaySection(top, f); err != nil {
		return err
	}
	if err := parseHTTPSection(top, f); err != nil {
		return err
	}
	if err := parseStateSection(top, f); err != nil {
		return err
	}
	if err := parseNodeSection(top, f); err != nil {
		return err
	}
	if err := parsePostgresSection(top, f); err != nil {
		return err
	}
	if err := parseWebSection(top, f); err != nil {
		return err
	}
	if err := parseBlossomSection(top, f); err != nil {
		return err
	}
	raw, ok := top["trust"]
	if !ok {
		return nil
	}
	var trust map[string]json.RawMessage
	if err := json.Unmarshal(raw, &trust); err != nil {
		return fmt.Errorf(`"trust" must be an object: %v`, err)
	}
	if err := checkKeys("trust", trust); err != nil {
		return err
	}
	for key, dst := range map[string]any{"enable": &f.Trust.Enable, "disable": &f.Trust.Disable,
		"allowlist": &f.Trust.Allowlist, "follow_hop": &f.Trust.FollowHop} {
		v, ok := trust[key]
		if !ok {
			continue
		}
		if err := json.NewDecoder(bytes.NewReader(v)).Decode(dst); err != nil {
			want := "a list of strings"
			if key == "follow_hop" {
				want = "true or false"
			}
			return fmt.Errorf(`"trust.%s" must be %s`, key, want)
		}
	}
	if _, err := lessons.NewPolicy(f.Trust); err != nil {
		return fmt.Errorf("trust: %v", err)
	}
	return nil
}

// checkKeys refuses a key not in serveFileKeys[section], naming it.
func checkKeys(section string, obj map[string]json.RawMessage) error {
	known := serveFileKeys[section]
	var unknown []string
	for k := range obj {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	where, prefix := "at the top level", ""
	if section != "" {
		where, prefix = "in "+`"`+section+`"`, section+"."
	}
	return fmt.Errorf("unknown key %q %s (known: %s)", prefix+unknown[0], where, strings.Join(known, ", "))
}

// trustConfig is the lesson trust policy the daemon runs: the --config
// file's trust section, then the flags: --trust-allow adds to its
// allowlist, --trust-disable to its disable list, and --trust-follows
// (either value) replaces whatever the file says about the follows rule.
func (c *ServeCommand) trustConfig() lessons.Config { return c.trustFrom(c.file) }

// trustFrom is trustConfig over the config file f (nil: none).
func (c *ServeCommand) trustFrom(f *serveFile) lessons.Config {
	var file lessons.Config
	followsFlag := c.Config.TrustFollows
	if f != nil {
		file, followsFlag = f.Trust, f.followsFlag || c.Config.TrustFollows
	}
	cfg := lessons.Config{
		Enable:    slices.Clone(file.Enable),
		Disable:   append(slices.Clone(file.Disable), c.Config.TrustDisable...),
		Allowlist: append(slices.Clone(file.Allowlist), c.Config.TrustAllow...),
		FollowHop: file.FollowHop,
	}
	if followsFlag {
		isFollows := func(r string) bool { return strings.TrimSpace(r) == string(lessons.RuleFollows) }
		cfg.Enable = slices.DeleteFunc(cfg.Enable, isFollows)
		cfg.Disable = append(slices.DeleteFunc(slices.Clone(file.Disable), isFollows), c.Config.TrustDisable...)
		cfg.FollowHop = c.Config.TrustFollows
	}
	return cfg
}
