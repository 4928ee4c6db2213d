package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// capFile copies a spec example from capabilities/acp/testdata into a temp dir.
func capFile(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "capabilities", "acp", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCapSign_InPlace(t *testing.T) {
	skKey := testkit.NewKey(t)
	sk, pk := skKey.SK, skKey.PK
	path := capFile(t, "note.acp.yaml")
	before, _ := os.ReadFile(path)
	out := cli(t, map[string]string{"AGENTNODE_KEY": sk}, "cap", "sign", path)
	if out.err != nil {
		t.Fatalf("%v\n%s", out.err, out.stderr)
	}
	if !strings.Contains(out.stdout, "signed did:nuwa:cap:note@1.0.0") || !strings.Contains(out.stdout, "pubkey "+pk) {
		t.Errorf("stdout:\n%s", out.stdout)
	}
	after, _ := os.ReadFile(path)
	if got, err := acp.Verify(after); err != nil || got != pk {
		t.Fatalf("the file does not verify: %q %v", got, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode changed to %v", st.Mode().Perm())
	}
	if len(after) <= len(before) || !strings.HasPrefix(string(after), string(before[:100])) {
		t.Error("the file was not signed in place")
	}
}

func TestCapSign_ToStdout(t *testing.T) {
	skKey := testkit.NewKey(t)
	sk, pk := skKey.SK, skKey.PK
	path := capFile(t, "weatherreporter.acp.yaml")
	out := cli(t, nil, "cap", "sign", "--key", sk, "-o", "-", path)
	if out.err != nil {
		t.Fatal(out.err)
	}
	if got, err := acp.Verify([]byte(out.stdout)); err != nil || got != pk {
		t.Fatalf("stdout does not verify: %v", err)
	}
	if !strings.Contains(out.stderr, "pubkey "+pk) {
		t.Errorf("stderr: %s", out.stderr)
	}
	if raw, _ := os.ReadFile(path); strings.Contains(string(raw), "signature:") {
		t.Error("-o - changed the file")
	}
}

func TestCapVerify(t *testing.T) {
	skKey := testkit.NewKey(t)
	sk, pk := skKey.SK, skKey.PK
	path := capFile(t, "note.acp.yaml")
	env := map[string]string{"AGENTNODE_KEY": sk}
	r := cli(t, env, "cap", "verify", path)
	if exitCode(r.err) != 1 || !strings.Contains(r.err.Error(), "not signed") || !strings.Contains(r.err.Error(), "cap sign") {
		t.Fatalf("unsigned: %v", r.err)
	}
	if r := cli(t, env, "cap", "sign", path); r.err != nil {
		t.Fatal(r.err)
	}
	r = cli(t, env, "cap", "verify", path)
	if r.err != nil || !strings.Contains(r.stdout, "ok did:nuwa:cap:note@1.0.0") || !strings.Contains(r.stdout, "author "+pk) {
		t.Fatalf("verify: %v\n%s", r.err, r.stdout)
	}
	raw, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(raw), "You are Note Assistant.", "You are  Note Assistant.", 1)), 0o600)
	r = cli(t, env, "cap", "verify", path)
	if exitCode(r.err) != 1 || !strings.Contains(r.err.Error(), "bad signature") {
		t.Errorf("tampered: %v", r.err)
	}
}

// An invalid package is refused with every problem as file:line.
func TestCapVerify_InvalidPackage(t *testing.T) {
	path := capFile(t, "note.acp.yaml")
	raw, _ := os.ReadFile(path)
	bad := strings.Replace(string(raw), "id: did:nuwa:cap:note@1.0.0", "id: did:nuwa:cap:Note", 1)
	bad = strings.Replace(bad, "memory_scope: sc:note", "memory_scope: note", 1)
	os.WriteFile(path, []byte(bad), 0o600)
	r := cli(t, nil, "cap", "verify", path)
	if exitCode(r.err) != 1 {
		t.Fatalf("exit %d: %v", exitCode(r.err), r.err)
	}
	for _, want := range []string{"2 problem(s)", path + `:3: metadata.id: "did:nuwa:cap:Note" is not did:nuwa:cap:<name>@<semver>`,
		path + `:8: metadata.memory_scope: "note" is not sc:<name>`} {
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, r.err)
		}
	}
	if r := cli(t, map[string]string{"AGENTNODE_KEY": nostr.GeneratePrivateKey()}, "cap", "sign", path); exitCode(r.err) != 1 {
		t.Errorf("sign of an invalid package: %v", r.err)
	}
}

func TestCap_UsageErrors(t *testing.T) {
	path := capFile(t, "note.acp.yaml")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"cap", "verify"}, "which file?"},
		{[]string{"cap", "verify", path, path}, "unexpected argument"},
		{[]string{"cap", "sign", path}, "no secret key"},
		{[]string{"cap", "sign", "--key", "nsec1bad", path}, "--key"},
		{[]string{"cap", "publish"}, "which file?"},
		{[]string{"cap", "frobnicate"}, "unknown subcommand"},
		{[]string{"cap", "sign", "--bogus", path}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		r := cli(t, nil, tt.args...)
		if exitCode(r.err) != 2 || !strings.Contains(r.err.Error(), tt.want) {
			t.Errorf("%v: exit %d, %v; want 2 and %q", tt.args, exitCode(r.err), r.err, tt.want)
		}
	}
}

func TestCapPublish(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	skKey := testkit.NewKey(t)
	sk, pk := skKey.SK, skKey.PK
	path := capFile(t, "note.acp.yaml")
	r := n.try(t, sk, "cap", "publish", path)
	if exitCode(r.err) != 1 || !strings.Contains(r.err.Error(), "not signed") {
		t.Fatalf("unsigned publish: %v", r.err)
	}
	n.run(t, sk, "cap", "sign", path)
	out := n.run(t, sk, "cap", "publish", path)
	if !strings.Contains(out, "published kind 30199 event ") || !strings.Contains(out, "naddr1") {
		t.Fatalf("stdout:\n%s", out)
	}
	got := n.query(t, nostr.Filter{Kinds: []int{events.KindCapability}, Authors: []string{pk}, Tags: nostr.TagMap{"d": {"note@1.0.0"}}})
	if len(got) != 1 {
		t.Fatalf("%d events stored", len(got))
	}
	p, err := acp.FromEvent(got[0], acp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if string(p.Raw) != string(raw) || !strings.Contains(out, got[0].ID) {
		t.Error("the stored package is not the file, or the id was not printed")
	}

	// Another key may not publish Alice's signed file.
	other := testkit.NewKey(t).SK
	r = n.try(t, other, "cap", "publish", path)
	if exitCode(r.err) != 1 || !strings.Contains(r.err.Error(), "is signed by "+pk) {
		t.Errorf("foreign key: %v", r.err)
	}

	// A changed 1.0.0 is refused by the relay: versions are immutable.
	os.WriteFile(path, []byte(strings.Replace(string(raw), "You are Note Assistant.", "You are Note Helper.", 1)), 0o600)
	n.run(t, sk, "cap", "sign", path)
	r = n.try(t, sk, "cap", "publish", path)
	if r.err == nil || !strings.Contains(r.err.Error(), "blocked: note@1.0.0 is already published") {
		t.Errorf("republish with other content: %v", r.err)
	}
}
