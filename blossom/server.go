package blossom

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// Defaults of the server's bounds (Options' zero values).
const (
	DefaultMaxBlobBytes   = 256 << 20 // one blob
	DefaultMaxUploads     = 4         // uploads and mirrors in flight
	DefaultListLimit      = 100       // descriptors per list page
	MaxListLimit          = 1000      // the most a client may ask for
	DefaultMirrorTimeout  = 120       // seconds to fetch a mirrored blob
	defaultMirrorBodySize = 8 << 10   // the mirror request's JSON body
)

// Options configure a Server; zero fields take the defaults.
type Options struct {
	// BaseURL is where clients reach the server (descriptor URLs); empty:
	// http://<the request's Host>.
	BaseURL string
	// MaxBlobBytes bounds one blob (413 beyond).
	MaxBlobBytes int64
	// MaxUploads bounds the uploads and mirrors in flight (429 beyond).
	MaxUploads int
	// MayUpload says whether pubkey may upload (and mirror); nil: anyone.
	MayUpload func(ctx context.Context, pubkey string) bool
	// UploadPolicy is the sentence a refused uploader reads.
	UploadPolicy string
	// Fetch is the HTTP client of mirrors (BUD-04); it must refuse the
	// node's own network (SSRF). nil: mirroring is off (501).
	Fetch *http.Client
}

// Server is the Blossom HTTP API over a Store.
type Server struct {
	store   *Store
	opt     Options
	uploads chan struct{} // a slot per upload in flight
}

// NewServer serves store with opt.
func NewServer(store *Store, opt Options) *Server {
	if opt.MaxBlobBytes <= 0 {
		opt.MaxBlobBytes = DefaultMaxBlobBytes
	}
	if opt.MaxUploads <= 0 {
		opt.MaxUploads = DefaultMaxUploads
	}
	if opt.UploadPolicy == "" {
		opt.UploadPolicy = "this node takes uploads from its agents, their owners and the authors of their definitions"
	}
	return &Server{store: store, opt: opt, uploads: make(chan struct{}, opt.MaxUploads)}
}

// IsBlossom reports whether r is for the Blossom API (the paths of
// BUD-01/02/04/06 and /.well-known/blossom).
func IsBlossom(r *http.Request) bool {
	p := r.URL.Path
	switch {
	case p == "/upload" && (r.Method == http.MethodPut || r.Method == http.MethodHead || r.Method == http.MethodOptions):
		return true
	case p == "/mirror" && (r.Method == http.MethodPut || r.Method == http.MethodOptions):
		return true
	case p == WellKnownPath, strings.HasPrefix(p, "/list/"):
		return true
	}
	_, ok := blobPath(p)
	return ok
}

// Wrap serves the Blossom paths and hands every other request to next.
func (s *Server) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !IsBlossom(r) {
			next.ServeHTTP(w, r)
			return
		}
		s.ServeHTTP(w, r)
	})
}

// ServeHTTP serves one Blossom request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cors(w)
	p := r.URL.Path
	switch {
	case r.Method == http.MethodOptions:
		w.WriteHeader(http.StatusNoContent)
	case p == "/upload" && r.Method == http.MethodPut:
		s.handleUpload(w, r)
	case p == "/upload" && r.Method == http.MethodHead:
		s.handleUploadCheck(w, r)
	case p == "/mirror":
		s.handleMirror(w, r)
	case p == WellKnownPath:
		s.handleWellKnown(w, r)
	case strings.HasPrefix(p, "/list/"):
		s.handleList(w, r)
	default:
		s.handleBlob(w, r)
	}
}

// blobPath reads "/<sha256>[.ext]".
func blobPath(p string) (string, bool) {
	name := strings.TrimPrefix(p, "/")
	if strings.Contains(name, "/") {
		return "", false
	}
	sha, _, _ := strings.Cut(name, ".")
	return sha, ValidHash(sha)
}

// cors lets browsers' Blossom clients in (BUD-01).
func cors(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Content-Length, X-SHA-256, X-Content-Type, X-Content-Length")
	h.Set("Access-Control-Allow-Methods", "GET, HEAD, PUT, DELETE, OPTIONS")
	h.Set("Access-Control-Expose-Headers", "X-Reason")
}

// fail answers code with reason in X-Reason (BUD-01) and the body.
func fail(w http.ResponseWriter, code int, reason string) {
	w.Header().Set("X-Reason", reason)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	w.Write([]byte(reason + "\n"))
}

// reply answers v as JSON.
func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// baseURL is where clients reach this server.
func (s *Server) baseURL(r *http.Request) string {
	if s.opt.BaseURL != "" {
		return strings.TrimSuffix(s.opt.BaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// withURL fills d's URL for r.
func (s *Server) withURL(r *http.Request, d Descriptor) Descriptor {
	d.URL = s.baseURL(r) + "/" + d.SHA256 + extension(d.Type)
	return d
}
