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
// Its callers (key lookups of the 25910 client and server, the
// replicator) carry no context: the read is bounded by the keystore
// (agentd/agentpg: 30 s).
func (d *Daemon) SecretKey(ref string) (string, error) {
	a, err := d.Lookup(ref)
	if err != nil {
		return "", err
	}
	sk, err := d.keys.Secret(context.Background(), a.PubKey)
	if err != nil {
		return "", fmt.Errorf("agentd: %w", err)
	}
	return sk, nil
}
