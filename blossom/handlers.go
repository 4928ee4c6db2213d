package blossom

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// handleBlob is BUD-01 GET/HEAD and BUD-02 DELETE of /<sha256>[.ext].
func (s *Server) handleBlob(w http.ResponseWriter, r *http.Request) {
	sha, ok := blobPath(r.URL.Path)
	if !ok {
		fail(w, http.StatusNotFound, "not a Blossom path")
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.serveBlob(w, r, sha)
	case http.MethodDelete:
		s.handleDelete(w, r, sha)
	default:
		fail(w, http.StatusMethodNotAllowed, "method not allowed: GET, HEAD or DELETE")
	}
}

// serveBlob streams the blob (ranges, HEAD) from disk.
func (s *Server) serveBlob(w http.ResponseWriter, r *http.Request, sha string) {
	f, _, err := s.store.Open(sha)
	if errors.Is(err, ErrNotFound) {
		fail(w, http.StatusNotFound, "blob not found")
		return
	}
	if err != nil {
		fail(w, http.StatusInternalServerError, "cannot read the blob")
		return
	}
	defer f.Close()
	typ := "application/octet-stream"
	if _, ext, ok := strings.Cut(r.URL.Path, "."); ok {
		if t := mime.TypeByExtension("." + ext); t != "" {
			typ = t
		}
	}
	w.Header().Set("Content-Type", typ)
	// blobs share the node's origin (the web console): never let one run
	// as a page there
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("ETag", `"`+sha+`"`)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	http.ServeContent(w, r, "", zeroTime, f)
}

// handleDelete is BUD-02 DELETE: the uploader's hold on the blob goes.
func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request, sha string) {
	auth, ok := s.authorize(w, r, "delete")
	if !ok {
		return
	}
	if !contains(hashes(auth), sha) {
		fail(w, http.StatusForbidden, fmt.Sprintf("the authorization has no [\"x\", %q] tag", sha))
		return
	}
	switch err := s.store.Delete(auth.PubKey, sha); {
	case errors.Is(err, ErrNotFound):
		fail(w, http.StatusNotFound, "you hold no such blob")
	case err != nil:
		fail(w, http.StatusInternalServerError, "delete failed")
	default:
		w.WriteHeader(http.StatusOK)
	}
}

// handleList is BUD-02 GET /list/<pubkey>: one page of the uploader's
// descriptors (?limit, at most MaxListLimit; ?cursor, the last sha256 of
// the previous page; the next cursor is in the X-Next-Cursor header).
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	pk, err := parsePubKey(strings.TrimPrefix(r.URL.Path, "/list/"))
	if err != nil {
		fail(w, http.StatusBadRequest, "want /list/<64-hex pubkey or npub>")
		return
	}
	limit, err := listLimit(r.URL.Query().Get("limit"))
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	page, err := s.store.List(pk, r.URL.Query().Get("cursor"), limit)
	if err != nil {
		fail(w, http.StatusInternalServerError, "list failed")
		return
	}
	for i := range page.Blobs {
		page.Blobs[i] = s.withURL(r, page.Blobs[i])
	}
	if page.Next != "" {
		w.Header().Set("X-Next-Cursor", page.Next)
	}
	reply(w, page.Blobs)
}

// listLimit reads ?limit.
func listLimit(v string) (int, error) {
	if v == "" {
		return DefaultListLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("limit: want a positive number, at most %d", MaxListLimit)
	}
	return min(n, MaxListLimit), nil
}

// parsePubKey reads a 64-hex pubkey or an npub.
func parsePubKey(s string) (string, error) {
	if strings.HasPrefix(s, "npub1") {
		return events.ParsePubKey(s)
	}
	if !nostr.IsValid32ByteHex(s) {
		return "", errors.New("not a pubkey")
	}
	return s, nil
}

// authorize reads the authorization for verb; a missing or bad one is
// answered 401.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, verb string) (*nostr.Event, bool) {
	auth, err := readAuth(r, verb)
	if err != nil {
		fail(w, http.StatusUnauthorized, err.Error())
		return nil, false
	}
	if auth == nil {
		fail(w, http.StatusUnauthorized, "authorization required: a signed kind-24242 event in \"Authorization: Nostr <base64>\"")
		return nil, false
	}
	return auth, true
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
