package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/lessons"
)

func writeServeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agentnode.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// parseServe parses serve's command line with env as the environment.
func parseServe(env map[string]string, args ...string) (*ServeCommand, error) {
	c := &ServeCommand{m: &Main{Stdout: io.Discard, Stderr: &bytes.Buffer{}, Getenv: func(k string) string { return env[k] }}}
	return c, c.ParseFlags(args)
}

// TestServe_configFileReachesPolicy runs the real serve command with
// --config and checks the daemon's policy.
func TestServe_configFileReachesPolicy(t *testing.T) {
	fileAllowed := testkit.NewKey(t).PK
	flagAllowed := testkit.NewKey(t).PK
	cfgPath := writeServeConfig(t, `{"trust": {"enable": ["follows"], "disable": ["sibling"], "allowlist": ["`+npub(fileAllowed)+`"]}}`)
	dir := t.TempDir()
	c, err := parseServe(map[string]string{"AGENTNODE_CONFIG": cfgPath},
		"--listen", "127.0.0.1:0", "--data", dir, "--log-level", "error", "--trust-allow", flagAllowed, "--trust-disable", "definition-author")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Open(ctx); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- c.Serve(ctx) }()
	defer func() {
		cancel()
		<-served
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		if err := c.Close(cctx); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	p := c.Daemon().Policy()
	for rule, want := range map[lessons.Rule]bool{
		lessons.RuleFollows: true, lessons.RuleSibling: false, lessons.RuleDefinitionAuthor: false,
		lessons.RuleSelf: true, lessons.RuleOwner: true, lessons.RuleAllowlist: true,
	} {
		if p.Enabled(rule) != want {
			t.Errorf("rule %s enabled = %v, want %v (policy %s)", rule, !want, want, p)
		}
	}
	if !p.Allowlisted(fileAllowed) || !p.Allowlisted(flagAllowed) {
		t.Errorf("allowlist: file %v, flag %v; want both", p.Allowlisted(fileAllowed), p.Allowlisted(flagAllowed))
	}
}

func TestServeConfig_precedence(t *testing.T) {
	followsOn := writeServeConfig(t, `{"trust": {"follow_hop": true, "enable": ["follows"]}}`)
	followsOff := writeServeConfig(t, `{"trust": {"disable": ["follows"]}}`)
	for _, tc := range []struct {
		name string
		args []string
		want bool
	}{
		{"file on", []string{"--config", followsOn}, true},
		{"flag false overrides file", []string{"--config", followsOn, "--trust-follows=false"}, false},
		{"flag true overrides file disable", []string{"--config", followsOff, "--trust-follows"}, true},
		{"file off", []string{"--config", followsOff}, false},
		{"flag disable wins over flag follows", []string{"--config", followsOn, "--trust-follows", "--trust-disable", "follows"}, false},
		{"no file", []string{"--trust-follows"}, true},
	} {
		c, err := parseServe(nil, tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		p, err := lessons.NewPolicy(c.trustConfig())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if p.Enabled(lessons.RuleFollows) != tc.want {
			t.Errorf("%s: follows = %v, want %v", tc.name, !tc.want, tc.want)
		}
	}
}

func TestServeConfig_refusesBadFiles(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"trust": {"folow_hop": true}}`, `unknown key "trust.folow_hop"`},
		{`{"trsut": {}}`, `unknown key "trsut"`},
		{`{"trust": {"enable": "follows"}}`, `"trust.enable" must be a list of strings`},
		{`{"trust": {"follow_hop": "yes"}}`, `"trust.follow_hop" must be true or false`},
		{`{"trust": {"disable": ["nobody"]}}`, `unknown trust rule`},
		{`{"trust": {"allowlist": ["npub1nope"]}}`, `allowlist`},
		{`[1, 2]`, `not a JSON object`},
	} {
		p := writeServeConfig(t, tc.body)
		_, err := parseServe(nil, "--config", p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) || exitCodeOf(err) != 2 {
			t.Errorf("%s: err = %v, want a usage error naming the file and containing %q", tc.body, err, tc.want)
		}
	}
	if _, err := parseServe(nil, "--config", filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing --config file was accepted")
	}
}

func TestServeConfig_dmSection(t *testing.T) {
	var f serveFile
	if err := parseServeFile([]byte(`{"dm":{"from":"allowlist","allow":["`+strings.Repeat("ab", 32)+`"]}}`), &f); err != nil {
		t.Fatal(err)
	}
	if f.DM.From != sendersAllowlist || len(f.DM.Allow) != 1 {
		t.Fatalf("dm = %+v", f.DM)
	}
	for _, bad := range []string{`{"dm":{"from":"friends"}}`, `{"dm":{"allow":["npub1nope"]}}`, `{"dm":{"to":"x"}}`} {
		var g serveFile
		if err := parseServeFile([]byte(bad), &g); err == nil || !strings.Contains(err.Error(), "dm") {
			t.Errorf("%s: err = %v, want a dm error", bad, err)
		}
	}
}

func TestServeConfig_directorySection(t *testing.T) {
	var f serveFile
	if err := parseServeFile([]byte(`{"directory":{"heartbeat_seconds":10,"ttl_seconds":30}}`), &f); err != nil {
		t.Fatal(err)
	}
	if f.Directory.Heartbeat != 10*time.Second || f.Directory.TTL != 30*time.Second {
		t.Fatalf("directory = %+v", f.Directory)
	}
	for _, bad := range []string{`{"directory":{"heartbeat_seconds":30,"ttl_seconds":30}}`, `{"directory":{"ttl_seconds":-1}}`, `{"directory":{"ttl":5}}`} {
		var g serveFile
		if err := parseServeFile([]byte(bad), &g); err == nil || !strings.Contains(err.Error(), "directory") {
			t.Errorf("%s: err = %v, want a directory error", bad, err)
		}
	}
}

// The top level's keys, in the order an unknown key's error lists them.
func TestServeConfig_topLevelKeys(t *testing.T) {
	var f serveFile
	err := parseServeFile([]byte(`{"trsut": {}}`), &f)
	want := `unknown key "trsut" at the top level (known: trust, model, bindings, consent, dm, a2a, strangers, contextvm, directory, relay, http, state, node, models, router, postgres, web, blossom, network)`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

// The sections' tags: defaults for absent keys (in the key's unit), the
// bounds, the unknown-key wording, and what a SIGHUP reports as needing
// a restart (not the reload:"live" keys).
func TestServeConfig_tags(t *testing.T) {
	c := &ServeCommand{file: &serveFile{}}
	if err := parseServeFile([]byte(`{"state": {"anti_entropy_seconds": -1}, "blossom": {"quota_bytes_total": 5}}`), c.file); err != nil {
		t.Fatal(err)
	}
	if st, b := c.stateConfig(), c.blossomConfig(); st.Lifecycle != 5*time.Minute || c.antiEntropyInterval() != -1 ||
		b.QuotaBytesPerUploader != 1<<30 || b.QuotaBlobsPerUploader != 10000 || b.QuotaBytesTotal != 5 {
		t.Errorf("state %+v (anti-entropy %v), blossom %+v: want the defaults, anti-entropy off, the file's total", st, c.antiEntropyInterval(), b)
	}
	for body, want := range map[string]string{
		`{"blossom": {"max_uploads": -1}}`:            `"blossom.max_uploads" must not be negative`,
		`{"blossom": {"zz": 1}}`:                      `"blossom": unknown key "zz"`,
		`{"relay": {"zz": 1}}`:                        `"relay": json: unknown field "zz"`,
		`{"relay": {"count_timeout_seconds": "1"}}`:   `"relay": "count_timeout_seconds": want a number`,
		`{"contextvm": {"session_idle_seconds": -1}}`: `"contextvm.session_idle_seconds" must not be negative`,
	} {
		if err := parseServeFile([]byte(body), &serveFile{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %s", body, err, want)
		}
	}
	var next serveFile
	if err := parseServeFile([]byte(`{"node": {"log_level": "debug"}, "http": {"read_timeout_seconds": 5}, "contextvm": {"max_sessions": 3},
		"relay": {"max_subscriptions": 3}, "trust": {"disable": ["follows"]}}`), &next); err != nil {
		t.Fatal(err)
	}
	if got := (*serveFile)(nil).restartChanges(&next); !slices.Equal(got, []string{"contextvm", "http"}) {
		t.Errorf("restart changes %q, want [contextvm http]", got)
	}
}
