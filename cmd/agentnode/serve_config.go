package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
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
	"github.com/agentnode/agentnode/internal/netguard"
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
	Trust     lessons.Config   `json:"trust" reload:"live"` // parseTrustSection
	Model     serveModel       `json:"model"`
	Bindings  serveBindings    `json:"bindings"`
	Consent   consent.Policy   `json:"consent"`
	DM        serveSenders     `json:"dm" section:"always"`
	A2A       serveSenders     `json:"a2a" section:"always"`
	Strangers serveStrangers   `json:"strangers"` // serve_agents.go
	ContextVM serveContextVM   `json:"contextvm"` // serve_agents.go
	Directory serveDirectory   `json:"directory"`
	Relay     serveRelay       `json:"relay" reload:"live"` // restart-only keys: relay.ReloadLimits
	HTTP      serveHTTP        `json:"http"`                // serve_http.go
	State     serveStateConfig `json:"state"`
	Node      serveNode        `json:"node" section:"key"`
	Models    serveModels      `json:"models"`
	Router    serveRouter      `json:"router"`
	Postgres  servePostgres    `json:"postgres" section:"key"`
	Web       serveWeb         `json:"web"`                   // serve_http.go
	Blossom   serveBlossom     `json:"blossom" section:"key"` // serve_relay.go
	Network   serveNetwork     `json:"network" section:"key"`

	// followsFlag: --trust-follows was given (either value), overriding
	// what the file says about the follows rule.
	followsFlag bool
}

// A section's tags on serveFile: section:"always" checks it also when
// absent (its check sets defaults), section:"key" words an unknown field
// `unknown key "x"` (the others: encoding/json's `json: unknown field
// "x"`); reload:"live" (here or on a key) is applied by a SIGHUP.

// checker is a section with checks beyond its tags; section is its name.
type checker interface{ check(section string) error }

// sections are f's sections in serveFile's order (the top level's keys).
func (f *serveFile) sections() []field { return sectionFields(reflect.ValueOf(f).Elem()) }

// configSections are the sections' names.
func configSections() []string {
	var names []string
	for _, s := range (&serveFile{}).sections() {
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
	b := []byte("{}")
	if c.Config.ConfigFile != "" {
		var err error
		if b, err = os.ReadFile(c.Config.ConfigFile); err != nil {
			return usagef("serve: --config: %v", err)
		}
	}
	if err := parseServeFile(b, f); err != nil {
		return usagef("serve: --config %s: %v", c.Config.ConfigFile, err)
	}
	c.file = f
	return nil
}

// parseServeFile decodes b into f, refusing unknown keys by name, section
// by section in serveFile's order, the trust section last; an absent
// section takes its defaults.
func parseServeFile(b []byte, f *serveFile) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if err := checkKeys("", configSections(), top); err != nil {
		return err
	}
	for _, s := range f.sections()[1:] {
		if err := readFileSection(top, s); err != nil {
			return err
		}
	}
	return parseTrustSection(top, f)
}

// readFileSection reads the section s from top and runs its check.
func readFileSection(top map[string]json.RawMessage, s field) error {
	raw, present := top[s.name]
	if err := readSection(s.name, raw, s.v.Addr().Interface(), s.tag.Get("section") == "key"); err != nil {
		return err
	}
	if c, ok := s.v.Addr().Interface().(checker); ok && (present || s.tag.Get("section") == "always") {
		return c.check(s.name)
	}
	return nil
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
	if err := checkKeys("trust", []string{"enable", "disable", "allowlist", "follow_hop"}, trust); err != nil {
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

// checkKeys refuses a key of obj not in known, naming it.
func checkKeys(section string, known []string, obj map[string]json.RawMessage) error {
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

// The generic section reader: a section is a struct whose fields' tags
// say everything about a key — its name (json), its unit (unit:"s",
// "ms", "mb": the JSON number is seconds, milliseconds or megabytes of a
// time.Duration or an int64 of bytes; a negative "mb" is -1, no bound),
// its bound (min:"0") and its default (default:"30", in the key's unit,
// taken when the key is 0 or absent). Embedded structs lend their keys
// to the section, nested ones are their own objects.

// readSection decodes raw into the struct dst points at, refusing an
// unknown key (`unknown key "x"` with keyErr, else encoding/json's
// `json: unknown field "x"`), then checks the bounds and fills the
// defaults (settle); raw nil: the section is absent, defaults only.
func readSection(name string, raw json.RawMessage, dst any, keyErr bool) error {
	v := reflect.ValueOf(dst).Elem()
	if raw != nil {
		if err := decodeValue(raw, v, "", keyErr); err != nil {
			return fmt.Errorf("%q: %v", name, err)
		}
	}
	return settle(name+".", v)
}

// decodeValue decodes raw into v: a struct key by key (units applied,
// unknown keys refused), anything else strictly by encoding/json.
func decodeValue(raw json.RawMessage, v reflect.Value, unit string, keyErr bool) error {
	if unit != "" {
		return decodeUnit(raw, v, unit)
	}
	if v.Kind() != reflect.Struct {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		return dec.Decode(v.Addr().Interface())
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return errors.New("want an object")
	}
	fields := map[string]field{}
	for _, f := range sectionFields(v) {
		fields[f.name] = f
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		f, ok := fields[k]
		switch {
		case !ok && keyErr:
			return fmt.Errorf("unknown key %q", k)
		case !ok:
			return fmt.Errorf("json: unknown field %q", k)
		}
		if err := decodeValue(obj[k], f.v, f.tag.Get("unit"), keyErr); err != nil {
			return fmt.Errorf("%q: %v", k, err)
		}
	}
	return nil
}

// units are the scales of unit:"…" tags.
var units = map[string]float64{"s": float64(time.Second), "ms": float64(time.Millisecond), "mb": 1 << 20}

// decodeUnit reads a JSON number in unit into v (a time.Duration or an
// int64); a negative number of megabytes is -1 (no bound).
func decodeUnit(raw json.RawMessage, v reflect.Value, unit string) error {
	var n float64
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("want a number (of unit %s)", unit)
	}
	if unit == "mb" && n < 0 {
		n = -1
	} else {
		n *= units[unit]
	}
	v.SetInt(int64(n))
	return nil
}

// field is one key of a section: its json name, where it decodes to, its tags.
type field struct {
	name string
	v    reflect.Value
	tag  reflect.StructTag
}

// sectionFields are the keys of the struct v in declaration order, those
// of its embedded structs in their place.
func sectionFields(v reflect.Value) []field {
	var out []field
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		switch {
		case sf.Anonymous && name == "":
			out = append(out, sectionFields(v.Field(i))...)
		case sf.IsExported() && name != "" && name != "-":
			out = append(out, field{name, v.Field(i), sf.Tag})
		}
	}
	return out
}

// settle checks the min:"0" bounds of the section v (prefix: "section.")
// and fills its zero keys from their default:"…" tags, in field order.
func settle(prefix string, v reflect.Value) error {
	if v.Kind() != reflect.Struct {
		return nil
	}
	for _, f := range sectionFields(v) {
		if err := settleField(prefix+f.name, f); err != nil {
			return err
		}
	}
	return nil
}

// settleField checks and defaults one key: min:"0" refuses a negative
// value (with a default: 0 or absent takes it, so it reads "positive").
func settleField(key string, f field) error {
	def, hasDef := f.tag.Lookup("default")
	switch {
	case !f.v.CanInt():
		return nil
	case f.v.Int() < 0 && f.tag.Get("min") == "0" && hasDef:
		return fmt.Errorf(`"%s" must be positive (0 or absent: the default)`, key)
	case f.v.Int() < 0 && f.tag.Get("min") == "0":
		return fmt.Errorf(`"%s" must not be negative`, key)
	}
	if hasDef && f.v.IsZero() {
		return decodeValue(json.RawMessage(def), f.v, f.tag.Get("unit"), true)
	}
	return nil
}

// conf is the --config file as read, or an empty one before it is (or in
// a test that builds a ServeCommand without ParseFlags): the sections'
// defaults.
func (c *ServeCommand) conf() *serveFile {
	if c.file == nil {
		f := &serveFile{}
		_ = parseServeFile([]byte("{}"), f) // the defaults: cannot fail
		return f
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
	LogLevel string `json:"log_level" reload:"live"`
}

// check normalises the pubkey and checks the public URL.
func (n *serveNode) check(string) error {
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
	URL          string        `json:"url"`
	LeaseTTL     time.Duration `json:"lease_ttl_seconds" unit:"s" min:"0"`
	AdvertiseURL string        `json:"advertise_url"`
}

// check wants a URL (here or from --postgres) and an http(s) advertise
// URL.
func (p *servePostgres) check(string) error {
	switch {
	case p.URL == "" && p.LeaseTTL == 0 && p.AdvertiseURL == "":
		return fmt.Errorf(`"postgres.url" is empty`)
	case p.URL != "": // else --postgres or AGENTNODE_POSTGRES names it
		if err := pgstore.CheckURL(p.URL); err != nil {
			return fmt.Errorf(`"postgres.url": %v`, err)
		}
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
// rate and per-connection budgets and its NIP-77 bounds, keyed by the tags
// of relay.Limits and relay.NegentropyLimits (docs/RELAY.md). Every key is
// optional; an absent or zero one keeps the default (relay.DefaultLimits),
// a negative rate or connection bound turns it off, and a key tagged
// min:"0" may not be negative.
type serveRelay struct {
	relay.Limits
	relay.NegentropyLimits

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

// check refuses bad operator keys and a default limit above the maximum.
func (r *serveRelay) check(string) error {
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
func (c *ServeCommand) relayLimits() relay.Limits { return c.conf().Relay.Limits }

// relayNegentropy are the NIP-77 bounds the relay runs with: the "relay"
// section's negentropy_* keys over relay.DefaultNegentropyLimits (zero
// fields are filled by the relay itself; docs/RELAY.md, "NIP-77").
func (c *ServeCommand) relayNegentropy() relay.NegentropyLimits {
	return c.conf().Relay.NegentropyLimits
}

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
	Lifecycle   time.Duration `json:"lifecycle_seconds" unit:"s" default:"300"`
	AntiEntropy time.Duration `json:"anti_entropy_seconds" unit:"s" default:"60"`
}

// stateConfig is the "state" section, or its zero value without a file.
func (c *ServeCommand) stateConfig() serveStateConfig {
	return c.conf().State
}

// antiEntropyInterval is the replicators' AntiEntropyInterval.
func (c *ServeCommand) antiEntropyInterval() time.Duration {
	return max(c.stateConfig().AntiEntropy, -1)
}

// runStateLifecycle runs the state lifecycle every lifecycle_seconds
// until ctx ends (counts of each pass that did something are logged).
func (c *ServeCommand) runStateLifecycle(ctx context.Context) error {
	every := c.stateConfig().Lifecycle
	if every < 0 {
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
	BaseURL   string        `json:"base_url"`
	Model     string        `json:"model"`
	APIKeyEnv string        `json:"api_key_env"` // the variable holding the key: keys stay out of files
	Timeout   time.Duration `json:"timeout_seconds" unit:"s"`
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
type serveSenders struct{ agentd.SenderPolicy }

// check is agentd.SenderPolicy.Check.
func (s *serveSenders) check(section string) error { return s.Check(section) }

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
	Heartbeat time.Duration `json:"heartbeat_seconds" unit:"s"`
	TTL       time.Duration `json:"ttl_seconds" unit:"s"`
	// RemoteTimeout bounds an agent/message to an agent on another node
	// (0: agentrpc.DefaultRemoteTimeout, 15 s).
	RemoteTimeout time.Duration `json:"remote_timeout_seconds" unit:"s" min:"0"`
}

// check refuses negative intervals and a TTL not longer than
// the heartbeat interval.
func (d *serveDirectory) check(string) error {
	if d.Heartbeat < 0 || d.TTL < 0 || d.Heartbeat > 0 && d.TTL > 0 && d.TTL <= d.Heartbeat {
		return fmt.Errorf(`"directory": heartbeat_seconds and ttl_seconds must be positive, and the TTL longer than the interval`)
	}
	return nil
}

// serveNetwork is the --config "network" section: which relays the node
// may dial when a stranger names them (lookup hints and pointers, NIP-65
// relay lists, comment roots, a ContextVM service_uri's relays). By
// default only public addresses: a stranger must not make the node probe
// its own network. The node's own relay and its --peer relays are
// always dialled (docs/SERVE.md "network").
type serveNetwork struct {
	AllowPrivateRelays bool     `json:"allow_private_relays"`
	AllowRelayHosts    []string `json:"allow_relay_hosts"`
}

// relayPolicy is the SSRF guard of relays strangers name.
func (c *ServeCommand) relayPolicy() netguard.Policy {
	n := c.conf().Network
	return netguard.Policy{AllowPrivate: n.AllowPrivateRelays, AllowHosts: n.AllowRelayHosts, Label: "relay",
		Hint: "allow it with the --config network section's allow_private_relays or allow_relay_hosts"}
}

// check wants exactly one of command or url per MCP service.
func (b *serveBindings) check(string) error {
	for uri, end := range b.MCP {
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
	if err == nil && file.Timeout > 0 {
		cfg.Timeout = file.Timeout
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

// serveModels and serveRouter are the --config "models" and "router"
// sections (docs/ROUTER.md):
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
type serveModels []serveModelEntry

// serveModelEntry is one model: a router.Model with the file's keys.
type serveModelEntry struct {
	Name          string   `json:"name"`
	Family        string   `json:"family"`
	URI           string   `json:"uri"`
	ContextWindow int      `json:"context_window"`
	Features      []string `json:"features"`
}

// models is the list for agentd.Config.Models.
func (ms serveModels) models() []router.Model {
	var out []router.Model
	for _, m := range ms {
		out = append(out, router.Model(m))
	}
	return out
}

// serveRouter is the "router" section (serveModels).
type serveRouter struct {
	IdleTimeout        time.Duration `json:"idle_timeout_seconds" unit:"s"`
	EmbeddingModel     string        `json:"embedding_model"`
	EmbeddingThreshold float64       `json:"embedding_threshold"`
}

// check bounds the threshold and the idle timeout.
func (r *serveRouter) check(string) error {
	if t := r.EmbeddingThreshold; t < 0 || t > 1 {
		return fmt.Errorf(`"router.embedding_threshold": a cosine similarity between 0 and 1 (0 = the default, 0.8)`)
	}
	if r.IdleTimeout < -time.Second {
		return fmt.Errorf(`"router.idle_timeout_seconds": 0 (default), -1 (never) or a number of seconds`)
	}
	return nil
}

// check refuses blank or repeated names and negative sizes.
func (ms *serveModels) check(string) error {
	seen := map[string]bool{}
	for i, m := range *ms {
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

// idle is agentd.Config.RouterIdle: -1 is never.
func (r serveRouter) idle() time.Duration { return max(r.IdleTimeout, -1) }

// What a SIGHUP reload finds changed in the config file.

// restartChanges are the sections of next that differ from prev's (the
// config the node started with; nil: none) and are read only at the
// start: a SIGHUP cannot apply them. The reload:"live" sections and keys
// ("trust", "relay", "node.log_level") are diffed where they are applied.
func (prev *serveFile) restartChanges(next *serveFile) []string {
	if prev == nil {
		prev = (&ServeCommand{}).conf()
	}
	var restart []string
	was := prev.sections()
	for i, s := range next.sections() {
		if s.tag.Get("reload") != "live" && !sameJSON(restartPart(was[i].v), restartPart(s.v)) {
			restart = append(restart, s.name)
		}
	}
	slices.Sort(restart)
	return restart
}

// restartPart is the section v without its reload:"live" keys.
func restartPart(v reflect.Value) any {
	cp := reflect.New(v.Type()).Elem()
	cp.Set(v)
	if cp.Kind() == reflect.Struct {
		for _, f := range sectionFields(cp) {
			if f.tag.Get("reload") == "live" {
				f.v.SetZero()
			}
		}
	}
	return cp.Interface()
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
	applied, restart := c.relay.ReloadLimits(next.Relay.Limits)
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
