package registry

import (
	"testing"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/registry/registrytest"
	"github.com/nbd-wtf/go-nostr"
	"gopkg.in/yaml.v3"
)

// BenchmarkSummarize: what the index spends on one package (Load and
// Index), its file-signature check (presence, the author's pubkey), and
// what a full BIP-340 check of the file (acp.VerifySigner, which Resolve
// runs through acp.FromEvent) would add per package (docs/REGISTRY.md).
func BenchmarkSummarize(b *testing.B) {
	sk := nostr.GeneratePrivateKey()
	spec, _ := registrytest.SeedSpec(1)
	evt, err := registrytest.Event(spec, sk, 1_700_000_000)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("summarize", func(b *testing.B) {
		for range b.N {
			if _, _, _, err := summarize(evt); err != nil {
				b.Fatal(err)
			}
		}
	})
	var doc summaryDoc
	if err := yaml.Unmarshal([]byte(evt.Content), &doc); err != nil {
		b.Fatal(err)
	}
	b.Run("file-signature", func(b *testing.B) {
		for range b.N {
			if err := fileSignedByAuthor(evt, &doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("acp.VerifySigner", func(b *testing.B) {
		for range b.N {
			if _, err := acp.VerifySigner([]byte(evt.Content)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
