package acp_test

import (
	"testing"

	"github.com/agentnode/agentnode/capabilities/acp"
)

func seeds(f *testing.F) {
	for _, name := range []string{"note.acp.yaml", "weatherreporter.acp.yaml"} {
		raw := readTestdata(f, name)
		f.Add(raw)
		f.Add(mustSign(f, raw, skAlice))
	}
	f.Add([]byte("metadata: {id: x}\nschema: '{}'\n"))
	f.Add([]byte("metadata:\n  signature: {pubkey: a, sig: b}\n"))
}

// FuzzParse: Parse never panics; a package it accepts has a usable identity.
func FuzzParse(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := acp.Parse(raw, acp.Options{})
		if err != nil {
			return
		}
		if _, _, err := acp.ParseCapURI(p.URI()); err != nil || p.Name() == "" || p.Version() == "" {
			t.Fatalf("accepted %q with a bad identity: %v", p.URI(), err)
		}
		for _, name := range p.ToolNames() {
			if _, ok := p.ToolParameters(name); !ok {
				t.Fatalf("tool %q has no parameters", name)
			}
		}
	})
}

// FuzzVerify: Verify never panics, and what verifies re-verifies after a
// re-sign by another key only for that key.
func FuzzVerify(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		pk, err := acp.Verify(raw)
		if err == nil && len(pk) != 64 {
			t.Fatalf("verified with pubkey %q", pk)
		}
		signed, err := acp.SignAs(raw, skBob, acp.SigFormNostr)
		if err != nil {
			return
		}
		if got, err := acp.Verify(signed); err != nil || got != pubOf(t, skBob) {
			t.Fatalf("Sign produced a file that does not verify: %v", err)
		}
	})
}
