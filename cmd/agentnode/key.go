package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// keypair is a generated key in every encoding people paste.
type keypair struct {
	SecretKey string `json:"secret_key,omitempty"` // hex
	Nsec      string `json:"nsec,omitempty"`
	PublicKey string `json:"public_key"` // hex
	Npub      string `json:"npub"`
	Out       string `json:"out,omitempty"` // where the nsec was written, with --out
}

// runKeyGenerate: key generate [--json] [--out FILE].
//
// The keypair goes to stdout. With --out the nsec is written to FILE
// instead (mode 0600, never over an existing file) and stdout shows only
// the public key.
func runKeyGenerate(_ context.Context, m *Main, args []string) error {
	fset := m.newFlagSet("key generate", "key generate [--json] [--out FILE]")
	asJSON := fset.Bool("json", false, "print the keypair as JSON")
	out := fset.String("out", "", "write the nsec to FILE (0600, refuses to overwrite) instead of printing it")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usagef("key generate: unexpected argument %q", fset.Arg(0))
	}
	kp, err := newKeypair()
	if err != nil {
		return err
	}
	if *out != "" {
		if err := writeSecretFile(*out, kp.Nsec); err != nil {
			return err
		}
		kp.SecretKey, kp.Nsec, kp.Out = "", "", *out
	}
	return m.printKeypair(kp, *asJSON)
}

func newKeypair() (keypair, error) {
	sk := nostr.GeneratePrivateKey()
	pk, err := nostr.GetPublicKey(sk)
	if err != nil || sk == "" {
		return keypair{}, fmt.Errorf("key generate: %w", errors.Join(errors.New("no key generated"), err))
	}
	nsec, _ := nip19.EncodePrivateKey(sk)
	return keypair{SecretKey: sk, Nsec: nsec, PublicKey: pk, Npub: npub(pk)}, nil
}

// writeSecretFile creates path with mode 0600 and writes the nsec; an
// existing file is never touched.
func writeSecretFile(path, nsec string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("key generate: %s already exists; not overwriting it", path)
	}
	if err != nil {
		return fmt.Errorf("key generate: %w", err)
	}
	_, err = fmt.Fprintln(f, nsec)
	return errors.Join(err, f.Close())
}

func (m *Main) printKeypair(kp keypair, asJSON bool) error {
	if asJSON {
		return writeJSON(m.Stdout, kp)
	}
	t := newTable(m.Stdout)
	if kp.Nsec != "" {
		fmt.Fprintf(t, "nsec\t%s\n", kp.Nsec)
		fmt.Fprintf(t, "secret key (hex)\t%s\n", kp.SecretKey)
	}
	fmt.Fprintf(t, "npub\t%s\n", kp.Npub)
	fmt.Fprintf(t, "public key (hex)\t%s\n", kp.PublicKey)
	if kp.Out != "" {
		fmt.Fprintf(t, "nsec written to\t%s\n", kp.Out)
	}
	return t.Flush()
}
