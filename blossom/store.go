package blossom

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Descriptor is a BUD-02 blob descriptor.
type Descriptor struct {
	URL      string `json:"url"`
	SHA256   string `json:"sha256"`
	Size     int64  `json:"size"`
	Type     string `json:"type"`
	Uploaded int64  `json:"uploaded"`
}

// Quota bounds what the store holds: bytes and blobs per uploader, bytes
// in total. Zero fields are no bound.
type Quota struct {
	BytesPerUploader int64
	BlobsPerUploader int
	TotalBytes       int64
}

// Store is blobs on disk, content-addressed, under one directory. It is
// safe for concurrent use within one process; instances sharing the
// directory (PostgreSQL mode) share the blobs, and each counts quotas
// from what it sees on disk when it first needs them.
type Store struct {
	dir   string
	quota Quota

	mu     sync.Mutex          // guards the fields below and the refs/data steps of Put and Delete
	owners map[string]ownerUse // usage per uploader, read from disk on first need
	total  int64               // bytes of distinct blobs, counted at OpenStore
}

type ownerUse struct {
	bytes int64
	blobs int
}

// OpenStore opens (creating) the store in dir and counts the bytes it
// holds. quota bounds later Puts.
func OpenStore(dir string, quota Quota) (*Store, error) {
	for _, d := range []string{"data", "owners", "refs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, fmt.Errorf("blossom: open store: %w", err)
		}
	}
	s := &Store{dir: dir, quota: quota, owners: map[string]ownerUse{}}
	if err := s.cleanTmp(); err != nil {
		return nil, err
	}
	total, err := s.countTotal()
	if err != nil {
		return nil, err
	}
	s.total = total
	return s, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// cleanTmp removes uploads a crash left behind.
func (s *Store) cleanTmp() error {
	ents, err := os.ReadDir(filepath.Join(s.dir, "tmp"))
	if err != nil {
		return fmt.Errorf("blossom: open store: %w", err)
	}
	for _, e := range ents {
		os.Remove(filepath.Join(s.dir, "tmp", e.Name()))
	}
	return nil
}

// countTotal sums the sizes of the blobs on disk.
func (s *Store) countTotal() (int64, error) {
	var total int64
	err := filepath.WalkDir(filepath.Join(s.dir, "data"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("blossom: count blobs: %w", err)
	}
	return total, nil
}

// blobPath is where the blob sha lives (sha already checked).
func (s *Store) blobPath(sha string) string {
	return filepath.Join(s.dir, "data", sha[:2], sha)
}

// Open opens the blob sha for reading, with its size.
func (s *Store) Open(sha string) (*os.File, int64, error) {
	if !ValidHash(sha) {
		return nil, 0, ErrBadHash
	}
	f, err := os.Open(s.blobPath(sha))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("blossom: open blob: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("blossom: stat blob: %w", err)
	}
	return f, info.Size(), nil
}

// Put stores what r yields (at most max bytes, else ErrTooLarge) as a
// blob held by owner, of MIME type typ. check, when not nil, sees the
// SHA-256 of the bytes before the blob is kept and may refuse it (see
// Want). The blob is durable when Put returns; quotas are checked before
// it is kept.
func (s *Store) Put(ctx context.Context, owner string, r io.Reader, max int64, typ string, check func(sha string) error) (Descriptor, error) {
	tmp, sha, size, err := s.receive(ctx, r, max)
	if err != nil {
		return Descriptor{}, err
	}
	defer os.Remove(tmp) // gone once renamed
	if check != nil {
		if err := check(sha); err != nil {
			return Descriptor{}, err
		}
	}
	d := Descriptor{SHA256: sha, Size: size, Type: typ, Uploaded: time.Now().Unix()}
	return d, s.keep(owner, tmp, d)
}

// receive copies r into a temporary file, hashing it, and fsyncs it.
func (s *Store) receive(ctx context.Context, r io.Reader, max int64) (path, sha string, size int64, err error) {
	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "up-*")
	if err != nil {
		return "", "", 0, fmt.Errorf("blossom: temp file: %w", err)
	}
	defer func() {
		f.Close()
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(ctxReader{ctx, r}, max+1))
	if err != nil {
		return "", "", 0, fmt.Errorf("blossom: receive: %w", err)
	}
	if n > max {
		return "", "", 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)
	}
	if err := f.Sync(); err != nil {
		return "", "", 0, fmt.Errorf("blossom: fsync: %w", err)
	}
	return f.Name(), hex.EncodeToString(h.Sum(nil)), n, nil
}

// Want is a Put check: the bytes must hash to one of xs (none: any).
func Want(xs ...string) func(string) error {
	return func(sha string) error {
		if len(xs) == 0 || contains(xs, sha) {
			return nil
		}
		return fmt.Errorf("%w: the bytes hash to %s, not %v", ErrHashMismatch, sha, xs)
	}
}

// ctxReader stops reading once ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// keep checks the quotas and moves the received blob into place, then
// records owner as its holder.
func (s *Store) keep(owner, tmp string, d Descriptor) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	use, err := s.usage(owner)
	if err != nil {
		return err
	}
	if _, err := os.Stat(s.descPath(owner, d.SHA256)); err == nil {
		return nil // owner holds it already
	}
	_, statErr := os.Stat(s.blobPath(d.SHA256))
	fresh := errors.Is(statErr, fs.ErrNotExist)
	if err := s.checkQuota(use, d.Size, fresh); err != nil {
		return err
	}
	if err := s.place(owner, tmp, d, fresh); err != nil {
		return err
	}
	s.owners[owner] = ownerUse{use.bytes + d.Size, use.blobs + 1}
	if fresh {
		s.total += d.Size
	}
	return nil
}

// checkQuota refuses a blob of size that use (and the store, if the blob
// is fresh) has no room for.
func (s *Store) checkQuota(use ownerUse, size int64, fresh bool) error {
	q := s.quota
	switch {
	case q.BytesPerUploader > 0 && use.bytes+size > q.BytesPerUploader:
		return fmt.Errorf("%w: the uploader holds %d bytes, this blob has %d, the bound is %d", ErrQuota, use.bytes, size, q.BytesPerUploader)
	case q.BlobsPerUploader > 0 && use.blobs+1 > q.BlobsPerUploader:
		return fmt.Errorf("%w: the uploader holds %d blobs, the bound is %d", ErrQuota, use.blobs, q.BlobsPerUploader)
	case fresh && q.TotalBytes > 0 && s.total+size > q.TotalBytes:
		return fmt.Errorf("%w: the node's blob store is full (%d of %d bytes)", ErrQuota, s.total, q.TotalBytes)
	}
	return nil
}

// place renames tmp to the blob's path (unless it is there), then writes
// the holder's ref and descriptor; each step is fsync'd.
func (s *Store) place(owner, tmp string, d Descriptor, fresh bool) error {
	refs := filepath.Join(s.dir, "refs", d.SHA256)
	if err := mkdirSync(refs); err != nil {
		return err
	}
	if err := writeSync(filepath.Join(refs, owner), nil); err != nil {
		return err
	}
	if fresh {
		if err := mkdirSync(filepath.Dir(s.blobPath(d.SHA256))); err != nil {
			return err
		}
		if err := os.Rename(tmp, s.blobPath(d.SHA256)); err != nil {
			return fmt.Errorf("blossom: place blob: %w", err)
		}
		if err := syncDir(filepath.Dir(s.blobPath(d.SHA256))); err != nil {
			return err
		}
	}
	b, _ := json.Marshal(d)
	if err := mkdirSync(filepath.Join(s.dir, "owners", owner)); err != nil {
		return err
	}
	return writeSync(s.descPath(owner, d.SHA256), b)
}

// descPath is owner's descriptor of sha.
func (s *Store) descPath(owner, sha string) string {
	return filepath.Join(s.dir, "owners", owner, sha)
}

// usage is owner's bytes and blobs, read from disk the first time. The
// caller holds s.mu.
func (s *Store) usage(owner string) (ownerUse, error) {
	if u, ok := s.owners[owner]; ok {
		return u, nil
	}
	var u ownerUse
	ents, err := os.ReadDir(filepath.Join(s.dir, "owners", owner))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return u, fmt.Errorf("blossom: read uploads: %w", err)
	}
	for _, e := range ents {
		if d, err := s.readDesc(owner, e.Name()); err == nil {
			u.bytes += d.Size
			u.blobs++
		}
	}
	s.owners[owner] = u
	return u, nil
}

// readDesc reads owner's descriptor of sha.
func (s *Store) readDesc(owner, sha string) (Descriptor, error) {
	b, err := os.ReadFile(s.descPath(owner, sha))
	if errors.Is(err, fs.ErrNotExist) {
		return Descriptor{}, ErrNotFound
	}
	if err != nil {
		return Descriptor{}, fmt.Errorf("blossom: read descriptor: %w", err)
	}
	var d Descriptor
	if err := json.Unmarshal(b, &d); err != nil {
		return Descriptor{}, fmt.Errorf("blossom: descriptor %s: %w", sha, err)
	}
	return d, nil
}
