package main

import (
	"context"
	"fmt"
	"io"

	"github.com/agentnode/agentnode/capabilities/acp"
)

const capSignUsage = `cap sign <file> [--key NSEC] [-o OUT]

Checks the package, then writes metadata.signature {pubkey, sig}: BIP-340
over sha256 of the file with the sig value blanked (docs/ACP.md). The rest
of the file is kept byte for byte. The file is signed in place unless -o
names another file (- for stdout). The key comes from --key or AGENTNODE_KEY.`

// runCapSign: cap sign (see capSignUsage).
func runCapSign(_ context.Context, m *Main, args []string) error {
	const cmd = "cap sign"
	fs := m.newFlagSet(cmd, capSignUsage)
	key := addKeyFlag(fs, "key", "AGENTNODE_KEY", "signing")
	var out string
	fs.StringVar(&out, "o", "", "write the signed file here instead of in place (- for stdout)")
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
	return m.capSign(cmd, file, out, sk)
}

func (m *Main) capSign(cmd, file, out, sk string) error {
	raw, p, err := readPackage(m, cmd, file)
	if err != nil {
		return err
	}
	signed, err := acp.Sign(raw, sk)
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
	pk, _ := acp.Verify(signed)
	fmt.Fprintf(w, "signed %s\n", p.URI())
	fmt.Fprintf(w, "  pubkey %s\n  %s\n", pk, npub(pk))
	if out != "" {
		fmt.Fprintf(w, "  wrote %s\n", out)
	}
}
