package keystore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/internal/atomicfile"
	"github.com/agentnode/agentnode/events"
)

// Sentinel errors; every error this package returns wraps one of them.
var (
	// ErrNotFound: no key file for that agent.
	ErrNotFound = errors.New("keystore: no key for this agent")
	// ErrInsecureFile: the key file or the directory is open to group or others.
	ErrInsecureFile = errors.New("keystore: permissions too open (want 0600 files in a 0700 directory)")
	// ErrPassphraseRequired: the key is NIP-49 encrypted and no passphrase is configured.
	ErrPassphraseRequired = errors.New("keystore: key is encrypted (NIP-49 ncryptsec) and no passphrase is configured")
	// ErrWrongPassphrase: the passphrase does not decrypt the key.
	ErrWrongPassphrase = errors.New("keystore: wrong passphrase")
	// ErrBadKeyFile: the file holds neither a key nor an ncryptsec, or a key of another agent.
	ErrBadKeyFile = errors.New("keystore: malformed key file")
	// ErrBadPubKey: the agent's pubkey is not 64-hex.
	ErrBadPubKey = errors.New("keystore: agent pubkey must be 64 lower-case hex characters")
)

// DefaultLogN is the NIP-49 scrypt cost (2^16 rounds, 64 MiB, ~0.1-0.3 s).
const DefaultLogN = 16

// Options configure a Store.
type Options struct {
	// Passphrase, when set, encrypts new keys (NIP-49) and decrypts
	// encrypted ones. Keys written as plain hex stay readable.
	Passphrase string
	// LogN is the scrypt cost of new encrypted keys; 0 means DefaultLogN.
	LogN uint8
}

// Store is a directory of agent keys. It is safe for concurrent use.
type Store struct {
	dir  string
	opts Options

	mu    sync.Mutex
	cache map[string]string // pubkey -> secret key (hex)
}

// Open opens dir, creating it (0700) if needed. An existing directory that
// group or others may access is refused.
func Open(dir string, opts Options) (*Store, error) {
	if opts.LogN == 0 {
		opts.LogN = DefaultLogN
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s is %04o", ErrInsecureFile, dir, fi.Mode().Perm())
	}
	return &Store{dir: dir, opts: opts, cache: map[string]string{}}, nil
}

// Dir is the directory the keys live in.
func (s *Store) Dir() string { return s.dir }

// Encrypts reports whether new keys are written NIP-49 encrypted.
func (s *Store) Encrypts() bool { return s.opts.Passphrase != "" }

// path is the key file of pubkey.
func (s *Store) path(pubkey string) (string, error) {
	if !events.IsHex64(pubkey) {
		return "", ErrBadPubKey
	}
	return filepath.Join(s.dir, pubkey+".key"), nil
}

// Create generates a keypair, writes the secret key and returns the pubkey.
func (s *Store) Create(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	sk := nostr.GeneratePrivateKey()
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		return "", fmt.Errorf("keystore: %w", err)
	}
	data, err := s.encode(sk)
	if err != nil {
		return "", err
	}
	path, _ := s.path(pk)
	if err := atomicfile.Write(path, []byte(data+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("keystore: write key: %w", err)
	}
	s.mu.Lock()
	s.cache[pk] = sk
	s.mu.Unlock()
	return pk, nil
}

// encode renders sk as stored: hex, or an ncryptsec with a passphrase.
func (s *Store) encode(sk string) (string, error) { return Encode(sk, s.opts) }

// Secret returns pubkey's secret key (hex). It refuses a file that group or
// others may access, and one that decodes to another agent's key.
func (s *Store) Secret(ctx context.Context, pubkey string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.mu.Lock()
	sk, ok := s.cache[pubkey]
	s.mu.Unlock()
	if ok {
		return sk, nil
	}
	raw, err := s.readFile(pubkey)
	if err != nil {
		return "", err
	}
	if sk, err = s.decode(raw); err != nil {
		return "", err
	}
	if got, err := nostr.GetPublicKey(sk); err != nil || got != pubkey {
		return "", fmt.Errorf("%w: %s.key holds the key of another agent", ErrBadKeyFile, pubkey)
	}
	s.mu.Lock()
	s.cache[pubkey] = sk
	s.mu.Unlock()
	return sk, nil
}

// readFile reads a key file after checking what and how open it is.
func (s *Store) readFile(pubkey string) (string, error) {
	path, err := s.path(pubkey)
	if err != nil {
		return "", err
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s", ErrNotFound, pubkey)
	}
	if err != nil {
		return "", fmt.Errorf("keystore: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a regular file", ErrBadKeyFile, path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%w: %s is %04o", ErrInsecureFile, path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("keystore: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// decode turns a stored key (hex or ncryptsec) into a hex secret key.
func (s *Store) decode(raw string) (string, error) { return Decode(raw, s.opts) }

// Encrypted reports whether pubkey's key file holds an ncryptsec.
func (s *Store) Encrypted(ctx context.Context, pubkey string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	raw, err := s.readFile(pubkey)
	if err != nil {
		return false, err
	}
	return strings.HasPrefix(raw, "ncryptsec1"), nil
}

// Sign sets evt.PubKey, ID and Sig with pubkey's secret key.
func (s *Store) Sign(ctx context.Context, pubkey string, evt *nostr.Event) error {
	sk, err := s.Secret(ctx, pubkey)
	if err != nil {
		return err
	}
	if err := evt.Sign(sk); err != nil {
		return fmt.Errorf("keystore: sign: %w", err)
	}
	return nil
}

// Delete removes pubkey's key file and forgets the key. Deleting a key that
// is not there wraps ErrNotFound.
func (s *Store) Delete(ctx context.Context, pubkey string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path, err := s.path(pubkey)
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.cache, pubkey)
	s.mu.Unlock()
	if err := os.Remove(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNotFound, pubkey)
	} else if err != nil {
		return fmt.Errorf("keystore: %w", err)
	}
	return atomicfile.SyncDir(s.dir)
}

// List returns the pubkeys that have a key file, sorted.
func (s *Store) List(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	var out []string
	for _, e := range entries {
		if pk, ok := strings.CutSuffix(e.Name(), ".key"); ok && events.IsHex64(pk) {
			out = append(out, pk)
		}
	}
	slices.Sort(out)
	return out, nil
}
