package blossom

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Delete drops owner's hold on sha (ErrNotFound if it holds none); the
// blob itself goes when no one else holds it.
func (s *Store) Delete(owner, sha string) error {
	if !ValidHash(sha) {
		return ErrBadHash
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	use, err := s.usage(owner)
	if err != nil {
		return err
	}
	d, err := s.readDesc(owner, sha)
	if err != nil {
		return err
	}
	if err := os.Remove(s.descPath(owner, sha)); err != nil {
		return fmt.Errorf("blossom: delete: %w", err)
	}
	s.owners[owner] = ownerUse{max(use.bytes-d.Size, 0), max(use.blobs-1, 0)}
	return s.unref(owner, sha)
}

// unref removes owner's ref of sha and, when it was the last, the blob.
// The caller holds s.mu.
func (s *Store) unref(owner, sha string) error {
	refs := filepath.Join(s.dir, "refs", sha)
	if err := os.Remove(filepath.Join(refs, owner)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blossom: delete ref: %w", err)
	}
	if err := os.Remove(refs); err != nil {
		return nil // another holder remains (rmdir of a non-empty directory fails)
	}
	info, err := os.Stat(s.blobPath(sha))
	if err != nil {
		return nil
	}
	if err := os.Remove(s.blobPath(sha)); err != nil {
		return fmt.Errorf("blossom: delete blob: %w", err)
	}
	s.total = max(s.total-info.Size(), 0)
	return syncDir(filepath.Dir(s.blobPath(sha)))
}

// Page is one page of an uploader's list.
type Page struct {
	Blobs []Descriptor
	Next  string // the cursor of the next page, "" at the end
}

// List is owner's descriptors in sha256 order after cursor (a sha256,
// or "" from the start), at most limit of them.
func (s *Store) List(owner, cursor string, limit int) (Page, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, "owners", owner))
	if errors.Is(err, fs.ErrNotExist) {
		return Page{Blobs: []Descriptor{}}, nil
	}
	if err != nil {
		return Page{}, fmt.Errorf("blossom: list: %w", err)
	}
	i := sort.Search(len(ents), func(i int) bool { return ents[i].Name() > cursor })
	p := Page{Blobs: []Descriptor{}}
	for ; i < len(ents) && len(p.Blobs) < limit; i++ {
		if !ValidHash(ents[i].Name()) {
			continue
		}
		if d, err := s.readDesc(owner, ents[i].Name()); err == nil {
			p.Blobs = append(p.Blobs, d)
		}
	}
	if i < len(ents) && len(p.Blobs) > 0 {
		p.Next = p.Blobs[len(p.Blobs)-1].SHA256
	}
	return p, nil
}

// ValidHash reports whether h is 64 lower-case hex digits.
func ValidHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// mkdirSync makes dir (0700) and fsyncs its parent when it was new.
func mkdirSync(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("blossom: mkdir: %w", err)
	}
	return syncDir(filepath.Dir(dir))
}

// writeSync writes path (0600) durably.
func writeSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("blossom: write: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("blossom: write: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

// syncDir fsyncs a directory so a rename or removal in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("blossom: sync dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("blossom: sync dir: %w", err)
	}
	return nil
}
