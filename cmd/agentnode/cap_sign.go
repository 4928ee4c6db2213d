package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentnode/agentnode/capabilities/acp"
)

const capSignUsage = `cap sign <file> [--key NSEC] [--format nostr|did-key|did-key-ed25519] [-o OUT]

Checks the package, then writes metadata.signature over sha256 of the file
with the signature value blanked (docs/ACP.md), in the form --format names:
  nostr            {pubkey, sig}: BIP-340 by the Nostr key (the default)
  did-key          "did:key:zQ3s…#z…": the spec's DID-key string, the same
                   secp256k1 key, BIP-340
  did-key-ed25519  "did:key:z6Mk…#z…": the key's 32 bytes as an Ed25519 seed
The rest of the file is kept byte for byte. The file is signed in place
unless -o names another file (- for stdout). The key comes from --key or
AGENTNODE_KEY.`

// runCapSign: cap sign (see capSignUsage).
func runCapSign(_ context.Context, m *Main, args []string) error {
	const cmd = "cap sign"
	fs := m.newFlagSet(cmd, capSignUsage)
	key := addKeyFlag(fs, "key", "AGENTNODE_KEY", "signing")
	var out, format string
	fs.StringVar(&out, "o", "", "write the signed file here instead of in place (- for stdout)")
	fs.StringVar(&format, "format", acp.SigFormNostr, "signature form: "+strings.Join(acp.SigFormats(), ", "))
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	file, err := fileArg(cmd, pos)
	if err != nil {
		return err
	}
	sk, err := key.secret(m, cmd)
	if err != nil {
		return err
	}
	return m.capSign(cmd, file, out, sk, format)
}

func (m *Main) capSign(cmd, file, out, sk, format string) error {
	if !slices.Contains(acp.SigFormats(), format) {
		return usagef("%s: --format %q: want one of %s", cmd, format, strings.Join(acp.SigFormats(), ", "))
	}
	raw, p, err := readPackage(m, cmd, file)
	if err != nil {
		return err
	}
	signed, err := acp.SignAs(raw, sk, format)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", cmd, file, err)
	}
	if out == "" {
		out = file
	}
	if out == "-" {
		_, err := m.Stdout.Write(signed)
		m.reportSigned(m.Stderr, p, signed, "")
		return err
	}
	if err := writeFileAtomic(out, signed); err != nil {
		return fmt.Errorf("%s: write: %w", cmd, err)
	}
	m.reportSigned(m.Stdout, p, signed, out)
	return nil
}

func (m *Main) reportSigned(w io.Writer, p *acp.Package, signed []byte, out string) {
	s, _ := acp.VerifySigner(signed)
	fmt.Fprintf(w, "signed %s\n", p.URI())
	if s.PubKey != "" {
		fmt.Fprintf(w, "  pubkey %s\n  %s\n", s.PubKey, npub(s.PubKey))
	}
	fmt.Fprintf(w, "  signature %s %s %s\n", s.Form, s.KeyType, s.DID)
	if out != "" {
		fmt.Fprintf(w, "  wrote %s\n", out)
	}
}
