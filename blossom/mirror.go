package blossom

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// WellKnownPath is the document saying this node runs a Blossom server.
const WellKnownPath = "/.well-known/blossom"

// handleMirror is BUD-04 PUT /mirror {"url": ...}: the server fetches the
// blob (through Options.Fetch, which refuses the node's own network),
// bounded in size and time, and keeps it if it hashes to an x tag of the
// authorization.
func (s *Server) handleMirror(w http.ResponseWriter, r *http.Request) {
	if s.opt.Fetch == nil {
		fail(w, http.StatusNotImplemented, "mirroring is off on this node")
		return
	}
	auth, ok := s.mayUpload(w, r, -1)
	if !ok {
		return
	}
	if len(hashes(auth)) == 0 {
		fail(w, http.StatusBadRequest, "a mirror's authorization must name the blob in an x tag")
		return
	}
	src, err := mirrorURL(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	release, ok := s.slot(w)
	if !ok {
		return
	}
	defer release()
	s.mirror(w, r, src, auth.PubKey, hashes(auth))
}

// mirrorURL reads the request's {"url": "http(s)://..."}.
func mirrorURL(r *http.Request) (string, error) {
	var body struct {
		URL string `json:"url"`
	}
	b, err := readLimited(r.Body, defaultMirrorBodySize)
	if err == nil {
		err = json.Unmarshal(b, &body)
	}
	if err != nil {
		return "", fmt.Errorf("want a JSON body {\"url\": \"https://...\"} of at most %d bytes", defaultMirrorBodySize)
	}
	u, err := url.Parse(body.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("url: want an http(s) URL")
	}
	return u.String(), nil
}

// mirror fetches src and keeps it for owner if it hashes to one of xs.
func (s *Server) mirror(w http.ResponseWriter, r *http.Request, src, owner string, xs []string) {
	ctx, cancel := context.WithTimeout(r.Context(), DefaultMirrorTimeout*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	resp, err := s.opt.Fetch.Do(req)
	if err != nil {
		fail(w, http.StatusBadGateway, "mirror: the source could not be fetched (unreachable, or an address this node does not fetch from)")
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fail(w, http.StatusBadGateway, fmt.Sprintf("mirror: the source answered %d", resp.StatusCode))
		return
	}
	if resp.ContentLength > s.opt.MaxBlobBytes {
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("blob too large: at most %d bytes", s.opt.MaxBlobBytes))
		return
	}
	d, err := s.store.Put(ctx, owner, resp.Body, s.opt.MaxBlobBytes, contentType(resp.Header.Get("Content-Type")), Want(xs...))
	if err != nil {
		s.putFailed(w, err)
		return
	}
	reply(w, s.withURL(r, d))
}

// handleWellKnown describes the server: its URL, bounds and who may
// upload.
func (s *Server) handleWellKnown(w http.ResponseWriter, r *http.Request) {
	reply(w, map[string]any{
		"url": s.baseURL(r), "buds": []int{1, 2, 4, 6, 11, 12},
		"max_blob_bytes": s.opt.MaxBlobBytes, "max_uploads": s.opt.MaxUploads,
		"list_limit": DefaultListLimit, "max_list_limit": MaxListLimit,
		"uploads": s.opt.UploadPolicy, "mirror": s.opt.Fetch != nil,
	})
}
