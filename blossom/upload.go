package blossom

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

var zeroTime time.Time

// handleUpload is BUD-02 PUT /upload: the body streamed to disk, hashed,
// checked against the authorization's x tags, kept.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	auth, ok := s.mayUpload(w, r, r.ContentLength)
	if !ok {
		return
	}
	release, ok := s.slot(w)
	if !ok {
		return
	}
	check := Want(hashes(auth)...)
	if want := r.Header.Get("X-SHA-256"); want != "" {
		check = both(check, Want(want))
	}
	d, err := s.store.Put(r.Context(), auth.PubKey, r.Body, s.opt.MaxBlobBytes, contentType(r.Header.Get("Content-Type")), check)
	// the slot is given back before the answer is written: a client that
	// has its answer finds the slot free, and a slow reader of the answer
	// holds none
	release()
	if err != nil {
		s.putFailed(w, err)
		return
	}
	reply(w, s.withURL(r, d))
}

// mayUpload reads the upload authorization and checks the uploader and
// the declared size (size < 0: unknown).
func (s *Server) mayUpload(w http.ResponseWriter, r *http.Request, size int64) (*nostr.Event, bool) {
	auth, ok := s.authorize(w, r, "upload")
	if !ok {
		return nil, false
	}
	if s.opt.MayUpload != nil && !s.opt.MayUpload(r.Context(), auth.PubKey) {
		npub, _ := nip19.EncodePublicKey(auth.PubKey)
		fail(w, http.StatusForbidden, fmt.Sprintf("blocked: %s may not upload here (%s)", npub, s.opt.UploadPolicy))
		return nil, false
	}
	if size > s.opt.MaxBlobBytes {
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("blob too large: at most %d bytes", s.opt.MaxBlobBytes))
		return nil, false
	}
	return auth, true
}

// slot takes an upload slot, or answers 429 when all are taken.
func (s *Server) slot(w http.ResponseWriter) (func(), bool) {
	select {
	case s.uploads <- struct{}{}:
		return func() { <-s.uploads }, true
	default:
		w.Header().Set("Retry-After", "5")
		fail(w, http.StatusTooManyRequests, fmt.Sprintf("rate-limited: %d uploads in progress, try again later", s.opt.MaxUploads))
		return nil, false
	}
}

// putFailed answers a failed Put.
func (s *Server) putFailed(w http.ResponseWriter, err error) {
	var tooBig *http.MaxBytesError
	switch {
	case errors.Is(err, ErrTooLarge), errors.As(err, &tooBig):
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("blob too large: at most %d bytes", s.opt.MaxBlobBytes))
	case errors.Is(err, ErrQuota):
		fail(w, http.StatusRequestEntityTooLarge, err.Error())
	case errors.Is(err, ErrHashMismatch):
		fail(w, http.StatusConflict, err.Error())
	default:
		fail(w, http.StatusBadRequest, "upload failed: the body could not be read or stored")
	}
}

// handleUploadCheck is BUD-06 HEAD /upload: would this upload be taken?
func (s *Server) handleUploadCheck(w http.ResponseWriter, r *http.Request) {
	size := int64(-1)
	if v := r.Header.Get("X-Content-Length"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			fail(w, http.StatusBadRequest, "X-Content-Length: want a byte count")
			return
		}
		size = n
	}
	if sha := r.Header.Get("X-SHA-256"); sha != "" && !ValidHash(sha) {
		fail(w, http.StatusBadRequest, "X-SHA-256: want 64 hex digits")
		return
	}
	if _, ok := s.mayUpload(w, r, size); ok {
		w.WriteHeader(http.StatusOK)
	}
}

// contentType is the upload's MIME type without parameters.
func contentType(v string) string {
	t, _, err := mime.ParseMediaType(v)
	if err != nil || t == "" {
		return "application/octet-stream"
	}
	return t
}

// extension is the file extension of a MIME type ("" if none known).
func extension(typ string) string {
	switch typ {
	case "", "application/octet-stream":
		return ""
	case "text/plain":
		return ".txt"
	case "text/markdown":
		return ".md"
	}
	exts, _ := mime.ExtensionsByType(typ)
	if len(exts) == 0 {
		return ""
	}
	return exts[0]
}

// readLimited reads at most max bytes of r.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("more than %d bytes", max)
	}
	return b, err
}

// both is a Put check passing when a and b pass.
func both(a, b func(string) error) func(string) error {
	return func(sha string) error {
		if err := a(sha); err != nil {
			return err
		}
		return b(sha)
	}
}
