package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/multiformats/go-multibase"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/internal/testkit"
)

// acpCase is one package of testdata/interop/acp/packages.json.
type acpCase struct {
	Name        string   `json:"name"`
	File        string   `json:"file"`
	Source      string   `json:"source"`
	Sign        string   `json:"sign"` // keep | none | nostr | nostr-unchecked | did-key | did-key-ed25519 | did-key-tampered | bare-ed25519
	Verdict     string   `json:"verdict"`
	Reason      string   `json:"reason"`
	Signature   string   `json:"signature"` // "<form> <key type>" cap verify prints
	Warnings    []string `json:"warnings"`
	NotCallable []string `json:"not_callable"`
}

func readACPCorpus(t *testing.T) []acpCase {
	t.Helper()
	b, err := os.ReadFile("../../testdata/interop/acp/packages.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []acpCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// Packages written the way other implementations write them (the NIP-7
// examples, and a variant per field the spec leaves open) get their
// expected verdict from `cap verify` and from `agent cap install`; warnings
// and not-callable tools are printed by cap verify and kept by install.
func TestInterop_ACPCorpus(t *testing.T) {
	n := openCapAgentNode(t, nil)
	agent := n.installAgent(t)
	for _, c := range readACPCorpus(t) {
		t.Run(c.Name, func(t *testing.T) {
			path := corpusPackage(t, c)
			r := cli(t, nil, "cap", "verify", path)
			checkACPVerdict(t, "cap verify", c, r.err, r.stdout)
			r = cli(t, n.env(""), "agent", "cap", "install", agent, path)
			checkACPVerdict(t, "agent cap install", c, r.err, "")
			if r.err == nil {
				checkInstalled(t, n, agent, c)
				n.run(t, "", "agent", "cap", "remove", agent, installedName(t, n, agent))
			}
		})
	}
}

func checkACPVerdict(t *testing.T, cmd string, c acpCase, err error, stdout string) {
	t.Helper()
	if c.Verdict == "refused" {
		if err == nil || !strings.Contains(err.Error(), c.Reason) {
			t.Errorf("%s = %v, want refused ...%s...", cmd, err, c.Reason)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s = %v, want %s", cmd, err, c.Verdict)
	}
	if stdout == "" {
		return
	}
	if c.Signature != "" && !strings.Contains(stdout, "signature "+c.Signature+" did:key:z") {
		t.Errorf("%s: want signature %q in\n%s", cmd, c.Signature, stdout)
	}
	if got := strings.Count(stdout, "  warning "); (got > 0) != (c.Verdict == "accepted-with-warning") || got < len(c.Warnings) {
		t.Errorf("%s: %d warnings for %s, want %d:\n%s", cmd, got, c.Verdict, len(c.Warnings), stdout)
	}
	for _, w := range c.Warnings {
		if !strings.Contains(stdout, w) {
			t.Errorf("%s: no warning ...%s... in\n%s", cmd, w, stdout)
		}
	}
	for _, nc := range c.NotCallable {
		if !strings.Contains(stdout, "not callable "+nc) {
			t.Errorf("%s: no not-callable %q in\n%s", cmd, nc, stdout)
		}
	}
}

func checkInstalled(t *testing.T, n *agentNode, agent string, c acpCase) {
	t.Helper()
	var list []agentd.InstalledCap
	decodeJSON(t, n.run(t, "", "agent", "cap", "list", agent, "--json"), &list)
	if len(list) != 1 {
		t.Fatalf("installed: %+v", list)
	}
	got := strings.Join(list[0].Warnings, "\n")
	for _, w := range c.Warnings {
		if !strings.Contains(got, w) {
			t.Errorf("install kept warnings %q, want ...%s...", got, w)
		}
	}
	if strings.Join(list[0].NotCallable, "\n") != strings.Join(c.NotCallable, "\n") {
		t.Errorf("install not_callable = %q, want %q", list[0].NotCallable, c.NotCallable)
	}
}

func installedName(t *testing.T, n *agentNode, agent string) string {
	var list []agentd.InstalledCap
	decodeJSON(t, n.run(t, "", "agent", "cap", "list", agent, "--json"), &list)
	return list[0].Name
}

// corpusPackage copies the case's file into a temp dir and signs it as
// the case says.
func corpusPackage(t *testing.T, c acpCase) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../../testdata/interop/acp", c.File))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), c.File)
	sk := testkit.NewKey(t).SK
	switch c.Sign {
	case "bare-ed25519":
		raw = signBare(t, raw)
	case "nostr-unchecked": // a package cap sign would refuse to sign
		if raw, err = acp.SignAs(raw, sk, acp.SigFormNostr); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	switch c.Sign {
	case "nostr", "did-key", "did-key-ed25519":
		if r := cli(t, nil, "cap", "sign", "--key", sk, "--format", c.Sign, path); r.err != nil {
			t.Fatalf("cap sign --format %s: %v", c.Sign, r.err)
		}
	case "did-key-tampered":
		if r := cli(t, nil, "cap", "sign", "--key", sk, "--format", "did-key", path); r.err != nil {
			t.Fatal(r.err)
		}
		b, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.Replace(string(b), "helpful weather", "helpful  weather", 1)), 0o600)
	}
	return path
}

// signBare writes the spec's literal form, independently of acp.SignAs:
// metadata.author = the Ed25519 did:key, signature = base58btc multibase
// of Ed25519 over sha256 of the file with the signature empty.
func signBare(t *testing.T, raw []byte) []byte {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := multibase.Encode(multibase.Base58BTC, append([]byte{0xed, 0x01}, priv.Public().(ed25519.PublicKey)...))
	s := strings.Replace(string(raw), "{{AUTHOR_DID}}", "did:key:"+key, 1)
	sum := sha256.Sum256([]byte(s))
	sig, _ := multibase.Encode(multibase.Base58BTC, ed25519.Sign(priv, sum[:]))
	return []byte(strings.Replace(s, `signature: ""`, `signature: "`+sig+`"`, 1))
}
