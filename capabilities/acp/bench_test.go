package acp_test

import (
	"testing"

	"github.com/agentnode/agentnode/capabilities/acp"
)

func BenchmarkParse(b *testing.B) {
	raw := note(b)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := acp.Parse(raw, acp.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSign(b *testing.B) {
	raw := note(b)
	for b.Loop() {
		if _, err := acp.SignAs(raw, skAlice, acp.SigFormNostr); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	signed := mustSign(b, note(b), skAlice)
	for b.Loop() {
		if _, err := acp.Verify(signed); err != nil {
			b.Fatal(err)
		}
	}
}
