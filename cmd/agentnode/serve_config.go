package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
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
	"":      sectionNames(),
	"trust": {"enable", "disable", "allowlist", "follow_hop"},
}

// sectionNames are the top-level keys: "trust" and fileSections'.
func sectionNames() []string {
	names := []string{"trust"}
	for _, s := range fileSections {
		names = append(names, s.name)
	}
	return names
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

// parseServeFile decodes b into f, refusing unknown keys by name, section
// by section in fileSections' order, then the trust section.
func parseServeFile(b []byte, f *serveFile) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if err := checkKeys("", top); err != nil {
		return err
	}
	for _, sec := range fileSections {
		if err := sec.read(top, f); err != nil {
			return err
		}
	}
	return parseTrustSection(top, f)
}

// section is one section of the --config file: where it decodes to
// (strictly: an unknown key is an error naming the section) and what is
// checked after.
type section struct {
	name   string
	dst    func(f *serveFile) any
	check  func(f *serveFile) error // nil: decoding is the check
	always bool                     // check also when the section is absent (it sets defaults)
	keyErr bool                     // an unknown field reads `unknown key "x"` (jsonFieldError)
	// parse, when set, reads the section instead (a section whose file
	// decodes it: serve_contextvm.go, serve_http.go, serve_web.go,
	// serve_blossom.go).
	parse func(top map[string]json.RawMessage, f *serveFile) error
}

// fileSections are the sections parseServeFile reads, in order; each
// file's serveX type documents its keys.
var fileSections = []section{
	{name: "model", dst: func(f *serveFile) any { return &f.Model }},
	{name: "bindings", dst: func(f *serveFile) any { return &f.Bindings }, check: checkBindings},
	{name: "consent", dst: func(f *serveFile) any { return &f.Consent }},
	{name: "dm", dst: func(f *serveFile) any { return &f.DM }, check: func(f *serveFile) error { return f.DM.Check("dm") }, always: true},
	{name: "a2a", dst: func(f *serveFile) any { return &f.A2A }, check: func(f *serveFile) error { return f.A2A.Check("a2a") }, always: true},
	{name: "strangers", dst: func(f *serveFile) any { return &f.Strangers }, check: func(f *serveFile) error { return f.Strangers.check() }},
	{name: "contextvm", parse: parseContextVMSection},
	{name: "directory", dst: func(f *serveFile) any { return &f.Directory }, check: checkDirectory},
	{name: "relay", dst: func(f *serveFile) any { return &f.Relay }, check: checkRelay},
	{name: "http", parse: parseHTTPSection},
	{name: "state", dst: func(f *serveFile) any { return &f.State }},
	{name: "node", dst: func(f *serveFile) any { return &f.Node }, check: func(f *serveFile) error { return f.Node.check() }, keyErr: true},
	{name: "models", dst: func(f *serveFile) any { return &f.Routing.Models }, check: checkModels},
	{name: "router", dst: func(f *serveFile) any { return &f.Routing.Router }, check: checkRouter},
	{name: "postgres", dst: func(f *serveFile) any { return &f.Postgres }, check: checkPostgres, keyErr: true},
	{name: "web", parse: parseWebSection},
	{name: "blossom", parse: parseBlossomSection},
}

// read decodes the section from top into f and checks it.
func (s section) read(top map[string]json.RawMessage, f *serveFile) error {
	if s.parse != nil {
		return s.parse(top, f)
	}
	raw, ok := top[s.name]
	if ok {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(s.dst(f)); err != nil {
			if s.keyErr {
				err = jsonFieldError(err)
			}
			return fmt.Errorf("%q: %v", s.name, err)
		}
	}
	if s.check == nil || !ok && !s.always {
		return nil
	}
	return s.check(f)
}

// parseTrustSection reads the "trust" section, naming the key a wrong
// type is at, and checks it as lessons.NewPolicy does.
func parseTrustSection(top map[string]json.RawMessage, f *serveFile) error {
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

// jsonFieldError rewrites encoding/json's `json: unknown field "x"` as
// `unknown key "x"`, the wording of the other sections.
func jsonFieldError(err error) error {
	if s, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown key %s", s)
	}
	return err
}

// checkMin refuses a negative value in a field of the struct v points at
// tagged `min:"0"`, naming it "section.key" (its json name), in field
// order.
func checkMin(section string, v any) error {
	rv := reflect.ValueOf(v).Elem()
	for i := range rv.NumField() {
		sf := rv.Type().Field(i)
		if sf.Tag.Get("min") != "0" || !rv.Field(i).CanInt() || rv.Field(i).Int() >= 0 {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		return fmt.Errorf(`"%s.%s" must not be negative`, section, name)
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

// conf is the --config file as read, or an empty one before it is (or in
// a test that builds a ServeCommand without ParseFlags): the sections'
// zero values are their defaults.
func (c *ServeCommand) conf() *serveFile {
	if c.file == nil {
		return &serveFile{}
	}
	return c.file
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
