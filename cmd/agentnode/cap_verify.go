package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/events"
)

const capVerifyUsage = `cap verify <file>

Exits 0 only when the package is valid and its metadata.signature verifies;
prints the author and the capability id. - reads stdin.`

// runCapVerify: cap verify (see capVerifyUsage).
func runCapVerify(_ context.Context, m *Main, args []string) error {
	const cmd = "cap verify"
	fs := m.newFlagSet(cmd, capVerifyUsage)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	file, err := fileArg(cmd, pos)
	if err != nil {
		return err
	}
	raw, p, err := readPackage(m, cmd, file)
	if err != nil {
		return err
	}
	pk, err := verifyPackage(cmd, file, raw)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "ok %s\n", p.URI())
	fmt.Fprintf(m.Stdout, "  author %s\n  %s\n", pk, npub(pk))
	fmt.Fprintf(m.Stdout, "  sha256 %s\n", events.ContentSHA256(string(raw)))
	return nil
}

// verifyPackage checks the signature with a hint for an unsigned file.
func verifyPackage(cmd, file string, raw []byte) (string, error) {
	pk, err := acp.Verify(raw)
	if errors.Is(err, acp.ErrUnsigned) {
		return "", fmt.Errorf("%s: %s: %w (sign it with `agentnode cap sign %s`)", cmd, file, err, file)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w", cmd, file, err)
	}
	return pk, nil
}
