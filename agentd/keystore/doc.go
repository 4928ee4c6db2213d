// Package keystore keeps the secret keys of the agents a node runs: one
// file per agent, <dir>/<agent pubkey hex>.key, mode 0600 in a 0700
// directory. A key is stored as 64 hex characters, or as a NIP-49
// ncryptsec when a passphrase is configured. The store only ever holds keys
// it generated itself (Create): it has no import, so an owner's key can
// never end up in it.
//
// A key file that group or others may read is refused (ErrInsecureFile),
// as is a directory that group or others may enter. Decrypted keys are kept
// in memory after the first use (scrypt is slow on purpose).
//
//	ks, err := keystore.Open(filepath.Join(dataDir, "agents"), keystore.Options{Passphrase: pass})
//	if err != nil { ... }
//	pk, err := ks.Create(ctx)           // a new agent keypair; returns the pubkey
//	evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now()}
//	err = ks.Sign(ctx, pk, &evt)         // signs with that agent's key
//	err = ks.Delete(ctx, pk)             // forgets it (file and memory)
//
// Every call that may touch the backing takes the caller's ctx (Keys): the
// files here are not interruptible, so a call on an ended ctx fails at
// once; agentd/agentpg's queries are cancelled with it.
package keystore
