package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/events"
)

const capVerifyUsage = `cap verify <file>

Exits 0 only when the package is valid and its metadata.signature verifies
(either form: {pubkey, sig} or the spec's DID-key string); prints the
capability id, the signer (its form, key type, pubkey and did:key), the
tools that are listed but not callable, and every warning: what the spec
leaves open and agentnode accepts but does not read (docs/INTEROP.md).
- reads stdin.`

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
	s, err := verifyPackage(cmd, file, raw)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "ok %s\n", p.URI())
	printSigner(m, s)
	fmt.Fprintf(m.Stdout, "  sha256 %s\n", events.ContentSHA256(string(raw)))
	for _, nc := range p.NotCallable() {
		fmt.Fprintf(m.Stdout, "  not callable %s\n", nc)
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(m.Stdout, "  warning %s: %s\n", file, w)
	}
	return nil
}

// printSigner prints the author: the Nostr key when there is one, and the
// signature's form and did:key.
func printSigner(m *Main, s acp.Signer) {
	if s.PubKey != "" {
		fmt.Fprintf(m.Stdout, "  author %s\n  %s\n", s.PubKey, npub(s.PubKey))
	} else {
		fmt.Fprintf(m.Stdout, "  author %s\n", s.DID)
	}
	fmt.Fprintf(m.Stdout, "  signature %s %s %s\n", s.Form, s.KeyType, s.DID)
}

// verifyPackage checks the signature with a hint for an unsigned file.
func verifyPackage(cmd, file string, raw []byte) (acp.Signer, error) {
	s, err := acp.VerifySigner(raw)
	if errors.Is(err, acp.ErrUnsigned) {
		return s, fmt.Errorf("%s: %s: %w (sign it with `agentnode cap sign %s`)", cmd, file, err, file)
	}
	if err != nil {
		return s, fmt.Errorf("%s: %s: %w", cmd, file, err)
	}
	return s, nil
}
