package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/capabilities/router"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/lessons"
	"github.com/agentnode/agentnode/relay"
	"github.com/agentnode/agentnode/relay/pgstore"
)

// serve's configuration: the --config file (JSON) and its sections, each
// section's checks and what it turns into for the parts that use it, and
// SIGHUP, which rereads the file and applies what may change at run time.

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
// (the "relay" keys are serveRelay's, below; the "http"
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
	Strangers serveStrangers `json:"strangers"` // serve_agents.go
	ContextVM serveContextVM `json:"contextvm"` // serve_agents.go
	Directory serveDirectory `json:"directory"`
	HTTP      serveHTTP      `json:"http"`
	Relay     serveRelay     `json:"relay"`
	Node      serveNode      `json:"node"`
	Web       serveWeb       `json:"web"` // serve_http.go
	Postgres  servePostgres  `json:"postgres"`
	Blossom   serveBlossom   `json:"blossom"` // serve_relay.go
	Routing   serveRouting   `json:"-"`       // "models", "router" (below)

	State serveStateConfig `json:"state"`

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
	// decodes it: serve_agents.go, serve_http.go, serve_http.go,
	// serve_relay.go).
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

// serveNode is the --config "node" section: who runs the node and where
// the world reaches it (docs/SERVE.md).
//
//	"node": {"name": "agents.example", "description": "…", "pubkey": "npub1…",
//	         "contact": "mailto:ops@example.org", "public_url": "wss://agents.example"}
//
// name, description, pubkey (the operator's, npub or hex) and contact go
// into the NIP-11 document; public_url is the relay address the agents
// advertise in their DM relay lists (kind 10050) instead of the listen
// address, which behind a proxy or in a container is not reachable.
type serveNode struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	PubKey      string `json:"pubkey"`
	Contact     string `json:"contact"`
	PublicURL   string `json:"public_url"`
	// LogLevel (debug, info, warn, error), when set, overrides
	// --log-level and AGENTNODE_LOG_LEVEL; a SIGHUP rereads it
	// (serve_config.go).
	LogLevel string `json:"log_level"`
}

// check normalises the pubkey and checks the public URL.
func (n *serveNode) check() error {
	if n.PubKey != "" {
		pk, err := events.ParsePubKey(n.PubKey)
		if err != nil {
			return fmt.Errorf(`"node.pubkey": %v (want the operator's npub or 64-hex public key)`, err)
		}
		n.PubKey = pk
	}
	if n.LogLevel != "" {
		var l slog.Level
		if err := l.UnmarshalText([]byte(n.LogLevel)); err != nil {
			return fmt.Errorf(`"node.log_level" %q: want debug, info, warn or error`, n.LogLevel)
		}
	}
	if n.PublicURL == "" {
		return nil
	}
	u, err := url.Parse(n.PublicURL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return fmt.Errorf(`"node.public_url" %q: want a ws:// or wss:// URL such as "wss://relay.example.org"`, n.PublicURL)
	}
	return nil
}

// nodeConfig is the "node" section in force (zero without --config).
func (c *ServeCommand) nodeConfig() serveNode {
	return c.conf().Node
}

// operator is the NIP-11 operator information of the "node" section.
func (n serveNode) operator() relay.Operator {
	return relay.Operator{Name: n.Name, Description: n.Description, PubKey: n.PubKey, Contact: n.Contact}
}

// dmRelayURLs are the relays the agents' DM relay lists name: the public
// URL when set, else the listen address (local).
func (c *ServeCommand) dmRelayURLs(local string) []string {
	if u := c.nodeConfig().PublicURL; u != "" {
		return []string{u}
	}
	return []string{local}
}

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

// serveRelay is the --config file's "relay" section: the relay's size,
// rate and per-connection budgets (docs/RELAY.md). Every key is optional;
// an absent or zero one keeps the default (relay.DefaultLimits), a
// negative rate turns that rate limit off, and a key tagged min:"0" may
// not be negative (checkRelay).
type serveRelay struct {
	MaxMessageBytes       int `json:"max_message_bytes" min:"0"`
	MaxContentBytes       int `json:"max_content_bytes" min:"0"`
	MaxEventTags          int `json:"max_event_tags" min:"0"`
	MaxTagValueBytes      int `json:"max_tag_value_bytes" min:"0"`
	MaxLimit              int `json:"max_limit" min:"0"`
	DefaultLimit          int `json:"default_limit" min:"0"`
	MaxCount              int `json:"max_count" min:"0"`
	CountTimeoutSeconds   int `json:"count_timeout_seconds" min:"0"`
	MaxQueryBytes         int `json:"max_query_bytes" min:"0"`
	QueryMemory           int `json:"query_memory" min:"0"`
	EventsPerSecond       int `json:"events_per_second"`
	EventsBurst           int `json:"events_burst"`
	MaxFutureSkewSeconds  int `json:"max_future_skew_seconds" min:"0"`
	MaxSubscriptions      int `json:"max_subscriptions" min:"0"`
	MaxFilters            int `json:"max_filters" min:"0"`
	MaxFilterValues       int `json:"max_filter_values" min:"0"`
	MaxSearchWords        int `json:"max_search_words" min:"0"`
	MaxConcurrentQueries  int `json:"max_concurrent_queries" min:"0"`
	MaxConcurrentMessages int `json:"max_concurrent_messages" min:"0"`
	MaxOutboundBytes      int `json:"max_outbound_bytes" min:"0"`
	MaxOutboundMessages   int `json:"max_outbound_messages" min:"0"`
	RequestsPerSecond     int `json:"requests_per_second"`
	RequestsBurst         int `json:"requests_burst"`
	WriteTimeoutSeconds   int `json:"write_timeout_seconds" min:"0"`
	// Connections and memory: 0 or absent takes the default (derived
	// from RLIMIT_NOFILE, 256 per address, 3/4 of the machine's memory),
	// a negative value turns that bound off.
	MaxConnections      int   `json:"max_connections"`
	MaxConnectionsPerIP int   `json:"max_connections_per_ip"`
	MemoryCeilingMB     int64 `json:"memory_ceiling_mb"`

	// NIP-77 bounds.
	NegentropyMaxSessions  int `json:"negentropy_max_sessions" min:"0"`
	NegentropyMaxItems     int `json:"negentropy_max_items" min:"0"`
	NegentropyMaxHeldItems int `json:"negentropy_max_held_items" min:"0"`
	NegentropyFrameBytes   int `json:"negentropy_frame_bytes" min:"0"`
	NegentropyIdleSeconds  int `json:"negentropy_idle_seconds" min:"0"`

	// Operators (npub or hex) may manage the relay over NIP-86 with NIP-98
	// auth; AgentKindsOnly stores the agent network's kinds only
	// (serve_relay.go, docs/RELAY.md#management).
	Operators      []string `json:"operators"`
	AgentKindsOnly bool     `json:"agent_kinds_only"`

	// AddressedKinds: the restricted kinds served without AUTH to a
	// filter naming the recipient in #p (absent: relay.DefaultAddressedKinds;
	// [] : none, the strict NIP-17 rule). docs/RELAY.md "Restricted kinds".
	AddressedKinds *[]int `json:"addressed_kinds"`
}

// addressedKinds is the relay's AddressedKinds: nil (the default) unless
// the "relay" section names them.
func (c *ServeCommand) addressedKinds() []int {
	if k := c.conf().Relay.AddressedKinds; k != nil {
		return append([]int{}, *k...)
	}
	return nil
}

// checkRelay refuses negative sizes (the fields tagged min:"0"), bad
// operator keys and a default limit above the maximum.
func checkRelay(f *serveFile) error {
	r := f.Relay
	if err := checkMin("relay", &r); err != nil {
		return err
	}
	if _, err := operatorKeys(r.Operators); err != nil {
		return err
	}
	if r.DefaultLimit > 0 && r.MaxLimit > 0 && r.DefaultLimit > r.MaxLimit {
		return fmt.Errorf(`"relay": default_limit %d is above max_limit %d`, r.DefaultLimit, r.MaxLimit)
	}
	return nil
}

// relayLimits are the limits the relay runs with: the "relay" section over
// relay.DefaultLimits (zero fields are filled by the relay itself).
func (c *ServeCommand) relayLimits() relay.Limits { return relayLimitsFrom(c.file) }

// relayLimitsFrom is relayLimits over the config file f (nil: none).
func relayLimitsFrom(f *serveFile) relay.Limits {
	if f == nil {
		return relay.Limits{}
	}
	r := f.Relay
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	return relay.Limits{
		MaxMessageBytes: r.MaxMessageBytes, MaxContentBytes: r.MaxContentBytes, MaxEventTags: r.MaxEventTags,
		MaxTagValueBytes: r.MaxTagValueBytes, MaxLimit: r.MaxLimit, DefaultLimit: r.DefaultLimit,
		MaxCount: r.MaxCount, CountTimeout: sec(r.CountTimeoutSeconds),
		MaxQueryBytes: r.MaxQueryBytes, QueryMemory: r.QueryMemory,
		EventsPerSecond: r.EventsPerSecond, EventsBurst: r.EventsBurst, MaxFutureSkew: sec(r.MaxFutureSkewSeconds),
		MaxSubscriptions: r.MaxSubscriptions, MaxFilters: r.MaxFilters, MaxFilterValues: r.MaxFilterValues,
		MaxSearchWords: r.MaxSearchWords, MaxConcurrentQueries: r.MaxConcurrentQueries,
		MaxConcurrentMessages: r.MaxConcurrentMessages, MaxOutboundBytes: r.MaxOutboundBytes,
		MaxOutboundMessages: r.MaxOutboundMessages, RequestsPerSecond: r.RequestsPerSecond,
		RequestsBurst: r.RequestsBurst, WriteTimeout: sec(r.WriteTimeoutSeconds),
		MaxConnections: r.MaxConnections, MaxConnectionsPerIP: r.MaxConnectionsPerIP,
		MemoryCeiling: megabytes(r.MemoryCeilingMB),
	}
}

// megabytes converts a "_mb" key, keeping its sign (negative: no bound).
func megabytes(n int64) int64 {
	if n < 0 {
		return -1
	}
	return n << 20
}

// relayNegentropy are the NIP-77 bounds the relay runs with: the "relay"
// section's negentropy_* keys over relay.DefaultNegentropyLimits (zero
// fields are filled by the relay itself; docs/RELAY.md, "NIP-77").
func (c *ServeCommand) relayNegentropy() relay.NegentropyLimits {
	r := c.conf().Relay
	return relay.NegentropyLimits{
		MaxSessions: r.NegentropyMaxSessions, MaxItems: r.NegentropyMaxItems,
		MaxHeldItems: r.NegentropyMaxHeldItems, FrameSize: r.NegentropyFrameBytes,
		IdleTimeout: time.Duration(r.NegentropyIdleSeconds) * time.Second,
	}
}

// Defaults of the --config file's "state" section.
const (
	defaultLifecycleInterval = 5 * time.Minute
)

// serveStateConfig is the --config file's "state" section:
//
//	"state": {"lifecycle_seconds": 300, "anti_entropy_seconds": 60}
//
// lifecycle_seconds is how often the lifecycle (x-ttl, x-retention,
// x-compression) runs over the whole store (0 or absent: 300; negative:
// never); anti_entropy_seconds how often each replicator sends its digests
// to the owner's agents (0 or absent: 60; negative: never). docs/ASM.md §8,
// §9.4.
type serveStateConfig struct {
	LifecycleSeconds   int `json:"lifecycle_seconds"`
	AntiEntropySeconds int `json:"anti_entropy_seconds"`
}

// stateSeconds turns a config value into an interval: 0 is def, negative is
// off (0).
func stateSeconds(v int, def time.Duration) time.Duration {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return time.Duration(v) * time.Second
}

// stateConfig is the "state" section, or its zero value without a file.
func (c *ServeCommand) stateConfig() serveStateConfig {
	return c.conf().State
}

// antiEntropyInterval is the replicators' AntiEntropyInterval.
func (c *ServeCommand) antiEntropyInterval() time.Duration {
	d := stateSeconds(c.stateConfig().AntiEntropySeconds, time.Minute)
	if d == 0 {
		return -1
	}
	return d
}

// runStateLifecycle runs the state lifecycle every lifecycle_seconds
// until ctx ends (counts of each pass that did something are logged).
func (c *ServeCommand) runStateLifecycle(ctx context.Context) error {
	every := stateSeconds(c.stateConfig().LifecycleSeconds, defaultLifecycleInterval)
	if every == 0 {
		c.asm.log.Info("state lifecycle off (state.lifecycle_seconds < 0)")
		<-ctx.Done()
		return nil
	}
	lc := state.NewLifecycle(c.asm.rt, state.LifecycleOptions{Logger: c.asm.log})
	c.asm.log.Info("state lifecycle scheduled", "every", every)
	return lc.Run(ctx, every)
}

// serveModel is the --config "model" section: the OpenAI-compatible chat
// model the agents talk through. The AGENTNODE_LLM_* environment
// variables override it (docs/MODEL.md).
type serveModel struct {
	BaseURL        string `json:"base_url"`
	Model          string `json:"model"`
	APIKeyEnv      string `json:"api_key_env"` // the variable holding the key: keys stay out of files
	TimeoutSeconds int    `json:"timeout_seconds"`
}

// serveBindings is the --config "bindings" section (docs/BINDINGS.md).
type serveBindings struct {
	AllowPrivate bool                   `json:"allow_private"`
	AllowHosts   []string               `json:"allow_hosts"`
	MCP          map[string]serveMCPEnd `json:"mcp"` // service_uri -> endpoint
}

// serveMCPEnd is one MCP service: a stdio command or a streamable HTTP URL.
type serveMCPEnd struct {
	Command []string `json:"command"`
	Env     []string `json:"env"`
	URL     string   `json:"url"`
}

// serveSenders is the --config "dm" and "a2a" sections: who may talk to
// the agents over NIP-17 (docs/DM.md), who may run their capability tools
// over kind 25910 (docs/BINDINGS.md); agentd.SenderPolicy decides.
type serveSenders = agentd.SenderPolicy

// Values of a serveSenders' From.
const (
	sendersAnyone    = agentd.SendersAnyone
	sendersOwner     = agentd.SendersOwner
	sendersAllowlist = agentd.SendersAllowlist
)

// serveDirectory is the --config "directory" section: how often the local
// agents beat (30333) and how long another agent stays available after its
// latest heartbeat (docs/DIRECTORY.md). Zero: the defaults (30 s, 90 s).
type serveDirectory struct {
	HeartbeatSeconds int `json:"heartbeat_seconds"`
	TTLSeconds       int `json:"ttl_seconds"`
	// RemoteTimeoutSeconds bounds an agent/message to an agent on another
	// node (0: agentrpc.DefaultRemoteTimeout, 15 s).
	RemoteTimeoutSeconds int `json:"remote_timeout_seconds"`
}

// checkDirectory refuses negative intervals and a TTL not longer than
// the heartbeat interval.
func checkDirectory(f *serveFile) error {
	d := f.Directory
	if d.RemoteTimeoutSeconds < 0 {
		return fmt.Errorf(`"directory": remote_timeout_seconds must not be negative`)
	}
	if d.HeartbeatSeconds < 0 || d.TTLSeconds < 0 ||
		d.HeartbeatSeconds > 0 && d.TTLSeconds > 0 && d.TTLSeconds <= d.HeartbeatSeconds {
		return fmt.Errorf(`"directory": heartbeat_seconds and ttl_seconds must be positive, and the TTL longer than the interval`)
	}
	return nil
}

// checkBindings wants exactly one of command or url per MCP service.
func checkBindings(f *serveFile) error {
	for uri, end := range f.Bindings.MCP {
		if (len(end.Command) == 0) == (end.URL == "") {
			return fmt.Errorf(`"bindings.mcp" %q: give exactly one of "command" or "url"`, uri)
		}
	}
	return nil
}

// modelConfig is the chat model in force: the --config "model" section,
// overridden by AGENTNODE_LLM_* (and OPENAI_*) variables. It returns
// llm.ErrNoModel when neither names a model: the node then runs without
// one and only chat says so.
func (c *ServeCommand) modelConfig() (llm.Config, error) {
	file := c.conf().Model
	getenv := func(k string) string {
		if v := c.m.Getenv(k); v != "" {
			return v
		}
		switch k {
		case llm.EnvBaseURL:
			return file.BaseURL
		case llm.EnvModel:
			return file.Model
		case llm.EnvAPIKey:
			if file.APIKeyEnv != "" {
				return c.m.Getenv(file.APIKeyEnv)
			}
		}
		return ""
	}
	cfg, err := llm.ConfigFromEnv(getenv)
	if err == nil && file.TimeoutSeconds > 0 {
		cfg.Timeout = time.Duration(file.TimeoutSeconds) * time.Second
	}
	return cfg, err
}

// bindingsConfig is the tool bindings' configuration (without A2A, which
// serve sets once the relays are known).
func (c *ServeCommand) bindingsConfig() bindings.Config {
	b := c.conf().Bindings
	cfg := bindings.Config{AllowPrivate: b.AllowPrivate, AllowHosts: b.AllowHosts, MCP: map[string]bindings.MCPEndpoint{}}
	for uri, end := range b.MCP {
		cfg.MCP[strings.TrimSpace(uri)] = bindings.MCPEndpoint{Command: end.Command, Env: end.Env, URL: end.URL}
	}
	return cfg
}

// dmAllowed reports whether from may talk to agent over DMs.
func (c *ServeCommand) dmAllowed(ctx context.Context, agent, from string) bool {
	return c.conf().DM.Admits(c.agentOwner(agent), from, nil)
}

// a2aAllowed reports whether the agent from may run agent's capability
// tools over kind 25910 (its owner's other agents may).
func (c *ServeCommand) a2aAllowed(ctx context.Context, agent, from string) bool {
	return c.conf().A2A.Admits(c.agentOwner(agent), from, c.siblingOwner(ctx, from))
}

// siblingOwner asks, when called, for the owner the agent from's verified
// owner link names ("" for none).
func (c *ServeCommand) siblingOwner(ctx context.Context, from string) func() string {
	return func() string {
		v, err := relay.VerifyAgent(ctx, c.relay, from) // the NIP-AE link, on the local relay
		if err != nil || !v.Verified {
			return ""
		}
		return v.Owner
	}
}

// agentOwner is a local agent's owner ("" for none, or no such agent).
func (c *ServeCommand) agentOwner(agent string) string {
	a, err := c.daemon.Lookup(agent)
	if err != nil {
		return ""
	}
	return a.Owner
}

// serveRouting is the --config "models" and "router" sections
// (docs/ROUTER.md):
//
//	"models": [{"name": "llama3.1:8b", "family": "llama3", "context_window": 8192, "features": ["tool_use"]},
//	           {"name": "gpt-4o-mini", "family": "gpt-4", "uri": "did:nuwa:model:gpt-4o-mini",
//	            "context_window": 128000, "features": ["tool_use", "function_calling_json_mode"]}],
//	"router": {"idle_timeout_seconds": 1800, "embedding_model": "text-embedding-3-small", "embedding_threshold": 0.8}
//
// The models are what capabilities' llm_requirements choose among, in
// this order of preference; each name is sent as the request's model to
// the one configured endpoint ("model" section). No list: requirements are
// not checked. idle_timeout_seconds: 0 = the default (1800), -1 = never.
// embedding_model makes embedding triggers match through the model
// endpoint's /v1/embeddings (none: they never match, and install warns);
// embedding_threshold is the cosine similarity a match needs (0 = 0.8).
type serveRouting struct {
	Models []serveModelEntry `json:"models"`
	Router struct {
		IdleTimeoutSeconds int     `json:"idle_timeout_seconds"`
		EmbeddingModel     string  `json:"embedding_model"`
		EmbeddingThreshold float64 `json:"embedding_threshold"`
	} `json:"router"`
}

type serveModelEntry struct {
	Name          string   `json:"name"`
	Family        string   `json:"family"`
	URI           string   `json:"uri"`
	ContextWindow int      `json:"context_window"`
	Features      []string `json:"features"`
}

// checkRouter bounds the "router" section's threshold and idle timeout.
func checkRouter(f *serveFile) error {
	r := f.Routing.Router
	if t := r.EmbeddingThreshold; t < 0 || t > 1 {
		return fmt.Errorf(`"router.embedding_threshold": a cosine similarity between 0 and 1 (0 = the default, 0.8)`)
	}
	if r.IdleTimeoutSeconds < -1 {
		return fmt.Errorf(`"router.idle_timeout_seconds": 0 (default), -1 (never) or a number of seconds`)
	}
	return nil
}

// checkModels refuses blank or repeated names and negative sizes.
func checkModels(f *serveFile) error {
	seen := map[string]bool{}
	for i, m := range f.Routing.Models {
		switch {
		case strings.TrimSpace(m.Name) == "":
			return fmt.Errorf(`"models"[%d]: "name" is required`, i)
		case seen[m.Name]:
			return fmt.Errorf(`"models"[%d]: %q is listed twice`, i, m.Name)
		case m.ContextWindow < 0:
			return fmt.Errorf(`"models"[%d]: "context_window" must not be negative`, i)
		}
		seen[m.Name] = true
	}
	return nil
}

// models is the list for agentd.Config.Models.
func (r serveRouting) models() []router.Model {
	var out []router.Model
	for _, m := range r.Models {
		out = append(out, router.Model{Name: m.Name, Family: m.Family, URI: m.URI,
			ContextWindow: m.ContextWindow, Features: m.Features})
	}
	return out
}

// idle is agentd.Config.RouterIdle.
func (r serveRouting) idle() time.Duration {
	if r.Router.IdleTimeoutSeconds < 0 {
		return -1
	}
	return time.Duration(r.Router.IdleTimeoutSeconds) * time.Second
}

// What a SIGHUP reload finds changed in the config file.

// restartChanges are the sections of next that differ from prev's (the
// config the node started with; nil: none) and are read only at the
// start: a SIGHUP cannot apply them. The run-time keys
// of "relay" and "node" are diffed where they are applied.
func (prev *serveFile) restartChanges(next *serveFile) []string {
	if prev == nil {
		prev = &serveFile{}
	}
	var restart []string
	for name, get := range map[string]func(*serveFile) any{
		"model": func(f *serveFile) any { return f.Model }, "models/router": func(f *serveFile) any { return f.Routing },
		"bindings": func(f *serveFile) any { return f.Bindings }, "consent": func(f *serveFile) any { return f.Consent },
		"dm": func(f *serveFile) any { return f.DM }, "a2a": func(f *serveFile) any { return f.A2A },
		"strangers": func(f *serveFile) any { return f.Strangers }, "directory": func(f *serveFile) any { return f.Directory },
		"http": func(f *serveFile) any { return f.HTTP }, "web": func(f *serveFile) any { return f.Web },
		"postgres": func(f *serveFile) any { return f.Postgres }, "state": func(f *serveFile) any { return f.State },
		"node": func(f *serveFile) any { n := f.Node; n.LogLevel = ""; return n },
	} {
		if !sameJSON(get(prev), get(next)) {
			restart = append(restart, name)
		}
	}
	slices.Sort(restart)
	return restart
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// managementChanges are the changes of relay.operators and
// relay.agent_kinds_only from prev (nil: none) to next.
func managementChanges(prev, next *serveFile) []string {
	var was serveRelay
	if prev != nil {
		was = prev.Relay
	}
	wasOps, _ := operatorKeys(was.Operators) // checked by parseServeFile
	ops, _ := operatorKeys(next.Relay.Operators)
	var out []string
	if !slices.Equal(wasOps, ops) {
		out = append(out, fmt.Sprintf("relay.operators %d -> %d", len(wasOps), len(ops)))
	}
	if was.AgentKindsOnly != next.Relay.AgentKindsOnly {
		out = append(out, fmt.Sprintf("relay.agent_kinds_only %v -> %v", was.AgentKindsOnly, next.Relay.AgentKindsOnly))
	}
	return out
}

// serveReload is serve's SIGHUP handling: from Open on, SIGHUP no longer
// kills the node; runReload rereads --config at each one and applies what
// may change at run time (docs/SERVE.md#reload).
type serveReload struct {
	hup     chan os.Signal
	applied *serveFile // the config file the node runs with (runReload's own)
}

// openReload catches SIGHUP (one waiting signal is kept: several sent
// while a reload runs make one more reload). Until runReload starts, a
// SIGHUP waits.
func (c *ServeCommand) openReload(context.Context, *slog.Logger) error {
	c.reload = &serveReload{hup: make(chan os.Signal, 1), applied: c.file}
	signal.Notify(c.reload.hup, syscall.SIGHUP)
	c.onClose(func(context.Context) error { signal.Stop(c.reload.hup); return nil })
	return nil
}

// runReload reloads at each SIGHUP until ctx ends.
func (c *ServeCommand) runReload(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.reload.hup:
			c.reloadConfig()
		}
	}
}

// reloadConfig rereads --config and applies the log level, the relay's
// run-time limits, its operators and lists, and the trust policy; it logs
// each change, and the changes that need a restart (not applied). A file
// that does not parse changes nothing.
func (c *ServeCommand) reloadConfig() {
	next, err := c.rereadConfig()
	if err != nil {
		slog.Error("reload refused: the config file is invalid; nothing changed", "config", c.Config.ConfigFile, "err", err)
		return
	}
	prev := c.reload.applied
	var applied, restart []string
	for _, step := range []func(prev, next *serveFile) (applied, restart []string){
		c.reloadLogLevel, c.reloadRelay, c.reloadOperators, c.reloadTrust,
	} {
		a, r := step(prev, next)
		applied, restart = append(applied, a...), append(restart, r...)
	}
	restart = append(restart, c.file.restartChanges(next)...) // against the start: still not in force
	c.reload.applied = next
	if len(restart) > 0 {
		slog.Warn("reload: these changes need a restart and were not applied", "changes", strings.Join(restart, "; "))
	}
	slog.Info("reloaded (SIGHUP)", "config", c.Config.ConfigFile, "changed", listOrNone(applied)) // last: the reload is over
}

// rereadConfig parses --config again (none: an empty file), carrying what
// the command line set over it.
func (c *ServeCommand) rereadConfig() (*serveFile, error) {
	f := &serveFile{}
	if c.file != nil {
		f.followsFlag = c.file.followsFlag
	}
	if c.Config.ConfigFile == "" {
		return f, nil
	}
	b, err := os.ReadFile(c.Config.ConfigFile)
	if err != nil {
		return nil, err
	}
	if err := parseServeFile(b, f); err != nil {
		return nil, err
	}
	return f, nil
}

func listOrNone(changes []string) string {
	if len(changes) == 0 {
		return "nothing"
	}
	return strings.Join(changes, "; ")
}

// reloadLogLevel applies "node.log_level" (absent: --log-level again).
func (c *ServeCommand) reloadLogLevel(_, next *serveFile) ([]string, []string) {
	want := c.Config.LogLevel
	if next.Node.LogLevel != "" {
		want = next.Node.LogLevel
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(want)); err != nil || level == c.level.Level() {
		return nil, nil
	}
	was := c.level.Level()
	c.level.Set(level)
	return []string{fmt.Sprintf("log level %s -> %s", was, level)}, nil
}

// reloadRelay applies the relay's run-time limits.
func (c *ServeCommand) reloadRelay(_, next *serveFile) ([]string, []string) {
	applied, restart := c.relay.ReloadLimits(relayLimitsFrom(next))
	return prefixed("relay.", applied), prefixed("relay.", restart)
}

// reloadOperators applies relay.operators and relay.agent_kinds_only, and
// rereads the lists' file.
func (c *ServeCommand) reloadOperators(prev, next *serveFile) ([]string, []string) {
	ops, _ := operatorKeys(next.Relay.Operators) // checked by parseServeFile
	if err := c.relay.SetManagement(ops, next.Relay.AgentKindsOnly); err != nil {
		slog.Error("reload: the relay's lists", "err", err)
	}
	return managementChanges(prev, next), nil
}

// reloadTrust applies the "trust" section (with the --trust-* flags).
func (c *ServeCommand) reloadTrust(_, next *serveFile) ([]string, []string) {
	before, after, err := c.daemon.SetTrust(c.trustFrom(next))
	if err != nil {
		slog.Error("reload: trust refused; the old policy stays", "err", err)
		return nil, nil
	}
	if before == after {
		return nil, nil
	}
	return []string{fmt.Sprintf("trust %s -> %s", before, after)}, nil
}

func prefixed(p string, list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = p + s
	}
	return out
}
