package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/agentnode/agentnode/blossom"
	"github.com/agentnode/agentnode/events"
)

// attachFlags are def publish's --attach PATH (repeatable) and --blossom
// URL: each file is uploaded to the Blossom server, described by a
// kind-1063 event (NIP-94) and referenced from the definition with
// ["e", <1063 id>, <relay>, "file"].
type attachFlags struct {
	paths   stringList
	blossom string
}

// publishWithFiles uploads the attachments, publishes their 1063s, then
// the definition referencing them, all signed with the one key.
func (m *Main) publishWithFiles(ctx context.Context, cmd string, w *writeFlags, a *attachFlags, def *events.Definition) error {
	sk, err := w.key.secret(m, cmd)
	if err != nil {
		return err
	}
	s, err := m.dial(ctx, &w.net)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	defer s.Close()
	if err := refusePublicKey(ctx, cmd, w.key, s, sk); err != nil {
		return err
	}
	c := &blossom.Client{BaseURL: a.server(m, w), SecretKey: sk, HTTP: &http.Client{}}
	for _, p := range a.paths {
		ref, err := m.attach(ctx, cmd, s, c, sk, p)
		if err != nil {
			return err
		}
		def.Files = append(def.Files, ref)
	}
	evt, err := sign(cmd, def.Template(), sk)
	if err != nil {
		return err
	}
	return m.publish(ctx, cmd, s, evt, w.json)
}

// attach uploads one file and publishes its 1063; the reference names
// the first relay that took it.
func (m *Main) attach(ctx context.Context, cmd string, s *session, c *blossom.Client, sk, path string) (events.EventRef, error) {
	d, err := c.UploadFile(ctx, path, typeOf(path))
	if err != nil {
		return events.EventRef{}, fmt.Errorf("%s: upload %s: %w", cmd, path, err)
	}
	name := filepath.Base(path)
	meta := events.FileMetadata{URL: d.URL, SHA256: d.SHA256, Size: d.Size, Type: d.Type, Name: name, Alt: name}
	evt, err := sign(cmd, meta.Template(), sk)
	if err != nil {
		return events.EventRef{}, err
	}
	accepted, err := s.publish(ctx, evt)
	if err != nil {
		return events.EventRef{}, fmt.Errorf("%s: file metadata of %s: %w", cmd, path, err)
	}
	fmt.Fprintf(m.Stderr, "uploaded %s (%d bytes, sha256 %s), file metadata %s\n", name, d.Size, d.SHA256, evt.ID)
	return events.EventRef{ID: evt.ID, Relay: first(accepted), Marker: events.MarkerFile}, nil
}

// server is --blossom, else the HTTP address of the first relay.
func (a *attachFlags) server(m *Main, w *writeFlags) string {
	if a.blossom != "" {
		return strings.TrimRight(a.blossom, "/")
	}
	r := w.net.urls(m)[0]
	if rest, ok := strings.CutPrefix(r, "wss://"); ok {
		return "https://" + strings.TrimRight(rest, "/")
	}
	return "http://" + strings.TrimRight(strings.TrimPrefix(r, "ws://"), "/")
}

// filesOf resolves a definition file's files: against its directory.
func filesOf(defFile string, files []string) stringList {
	var out stringList
	for _, p := range files {
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(defFile), p)
		}
		out = append(out, p)
	}
	return out
}

func first(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[0]
}
