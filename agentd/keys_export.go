package agentd

import (
	"context"
	"fmt"
)

// SecretKey returns the secret key (hex) of the installed agent named by
// ref (npub, nprofile, hex pubkey or unique name), decrypted from the
// keystore. It is for in-process components that act as the agent — the
// Agent State Model replicator signs, decrypts and answers NIP-42 with it
// (cmd/agentnode serve, docs/ASM.md §9) — and must never leave the node.
// ctx bounds the keystore read (its caller's request or session).
func (d *Daemon) SecretKey(ctx context.Context, ref string) (string, error) {
	a, err := d.Lookup(ref)
	if err != nil {
		return "", err
	}
	sk, err := d.keys.Secret(ctx, a.PubKey)
	if err != nil {
		return "", fmt.Errorf("agentd: %w", err)
	}
	return sk, nil
}
