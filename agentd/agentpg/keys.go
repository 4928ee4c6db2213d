package agentpg

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/keystore"
	"github.com/agentnode/agentnode/events"
)

// Keys is keystore.Keys in the database: one row per agent, the secret
// stored as keystore.Encode renders it (an ncryptsec with a passphrase).
type Keys struct {
	db   *DB
	opts keystore.Options

	mu    sync.Mutex
	cache map[string]string // pubkey -> secret (hex); a pubkey's key never changes
}

var _ keystore.Keys = (*Keys)(nil)

// Keys returns the key store; opts as for keystore.Open.
func (db *DB) Keys(opts keystore.Options) *Keys {
	return &Keys{db: db, opts: opts, cache: map[string]string{}}
}

// Encrypts reports whether new keys are stored encrypted.
func (k *Keys) Encrypts() bool { return k.opts.Passphrase != "" }

// Create generates a keypair, stores the secret and returns the pubkey.
func (k *Keys) Create(ctx context.Context) (string, error) {
	sk := nostr.GeneratePrivateKey()
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		return "", fmt.Errorf("keystore: %w", err)
	}
	stored, err := keystore.Encode(sk, k.opts)
	if err != nil {
		return "", err
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	if _, err := k.db.pool.Exec(ctx, `INSERT INTO agentpg_keys (pubkey, secret) VALUES ($1, $2)`, pk, stored); err != nil {
		return "", fmt.Errorf("keystore: store key: %w", err)
	}
	k.remember(pk, sk)
	return pk, nil
}

func (k *Keys) remember(pk, sk string) {
	k.mu.Lock()
	k.cache[pk] = sk
	k.mu.Unlock()
}

// raw reads pubkey's stored key.
func (k *Keys) raw(ctx context.Context, pubkey string) (string, error) {
	if !events.IsHex64(pubkey) {
		return "", keystore.ErrBadPubKey
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	var stored string
	err := k.db.pool.QueryRow(ctx, `SELECT secret FROM agentpg_keys WHERE pubkey = $1`, pubkey).Scan(&stored)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("%w: %s", keystore.ErrNotFound, pubkey)
	}
	if err != nil {
		return "", fmt.Errorf("keystore: read key: %w", err)
	}
	return stored, nil
}

// Secret returns pubkey's secret key (hex), checked to be pubkey's.
func (k *Keys) Secret(ctx context.Context, pubkey string) (string, error) {
	k.mu.Lock()
	sk, ok := k.cache[pubkey]
	k.mu.Unlock()
	if ok {
		return sk, nil
	}
	stored, err := k.raw(ctx, pubkey)
	if err != nil {
		return "", err
	}
	if sk, err = keystore.Decode(stored, k.opts); err != nil {
		return "", err
	}
	if got, err := nostr.GetPublicKey(sk); err != nil || got != pubkey {
		return "", fmt.Errorf("%w: the row of %s holds the key of another agent", keystore.ErrBadKeyFile, pubkey)
	}
	k.remember(pubkey, sk)
	return sk, nil
}

// Sign sets evt.PubKey, ID and Sig with pubkey's key.
func (k *Keys) Sign(ctx context.Context, pubkey string, evt *nostr.Event) error {
	sk, err := k.Secret(ctx, pubkey)
	if err != nil {
		return err
	}
	if err := evt.Sign(sk); err != nil {
		return fmt.Errorf("keystore: sign: %w", err)
	}
	return nil
}

// Encrypted reports whether pubkey's stored key is an ncryptsec.
func (k *Keys) Encrypted(ctx context.Context, pubkey string) (bool, error) {
	stored, err := k.raw(ctx, pubkey)
	if err != nil {
		return false, err
	}
	return keystore.IsEncrypted(stored), nil
}

// Delete removes pubkey's key.
func (k *Keys) Delete(ctx context.Context, pubkey string) error {
	if !events.IsHex64(pubkey) {
		return keystore.ErrBadPubKey
	}
	k.mu.Lock()
	delete(k.cache, pubkey)
	k.mu.Unlock()
	ctx, cancel := bounded(ctx)
	defer cancel()
	tag, err := k.db.pool.Exec(ctx, `DELETE FROM agentpg_keys WHERE pubkey = $1`, pubkey)
	if err != nil {
		return fmt.Errorf("keystore: delete key: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %s", keystore.ErrNotFound, pubkey)
	}
	return nil
}

// List returns the pubkeys that have a key, sorted.
func (k *Keys) List(ctx context.Context) ([]string, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	rows, err := k.db.pool.Query(ctx, `SELECT pubkey FROM agentpg_keys ORDER BY pubkey`)
	if err != nil {
		return nil, fmt.Errorf("keystore: list: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("keystore: list: %w", err)
	}
	return out, nil
}
