package events

import (
	"path"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// KindFileMetadata is NIP-94 file metadata: where a file is (url), its
// SHA-256 (x), size and MIME type; definitions' and skills' "file"
// references point at it.
const KindFileMetadata = 1063

// KindBlossomServers is a user's Blossom server list (BUD-03): one
// ["server", url] tag per server, the most trusted first.
const KindBlossomServers = 10063

// FileMetadata is a kind-1063 event's content and tags.
type FileMetadata struct {
	URL     string // ["url", ...]
	SHA256  string // ["x", ...]
	Size    int64  // ["size", ...]
	Type    string // ["m", ...]
	Name    string // ["name", ...]: the file name an install gives it (else alt)
	Alt     string // ["alt", ...]
	Content string // a description
}

// Template is an unsigned kind-1063 event of m.
func (m FileMetadata) Template() nostr.Event {
	tags := nostr.Tags{{"url", m.URL}, {"x", m.SHA256}, {"ox", m.SHA256}, {"size", strconv.FormatInt(m.Size, 10)}}
	if m.Type != "" {
		tags = append(tags, nostr.Tag{"m", m.Type})
	}
	if m.Name != "" {
		tags = append(tags, nostr.Tag{"name", m.Name})
	}
	if m.Alt != "" {
		tags = append(tags, nostr.Tag{"alt", m.Alt})
	}
	return nostr.Event{Kind: KindFileMetadata, Tags: tags, Content: m.Content}
}

// ParseFileMetadata reads a kind-1063 event. It needs a 64-hex x and a
// non-negative size; url may be empty (servers are looked up instead).
func ParseFileMetadata(evt *nostr.Event) (*FileMetadata, error) {
	if evt.Kind != KindFileMetadata {
		return nil, invalidBecause(evt.Kind, "kind", ErrWrongKind, "want 1063")
	}
	m := &FileMetadata{Content: evt.Content}
	for _, t := range evt.Tags {
		if len(t) < 2 {
			continue
		}
		switch t[0] {
		case "url":
			m.URL = t[1]
		case "x":
			m.SHA256 = strings.ToLower(t[1])
		case "size":
			n, err := strconv.ParseInt(t[1], 10, 64)
			if err != nil || n < 0 {
				return nil, invalidBecause(evt.Kind, "size", ErrBadValue, "not a byte count")
			}
			m.Size = n
		case "m":
			m.Type = t[1]
		case "name":
			m.Name = t[1]
		case "alt":
			m.Alt = t[1]
		}
	}
	if !IsHex64(m.SHA256) {
		return nil, invalidBecause(evt.Kind, "x", ErrBadValue, "not a 64-hex sha256")
	}
	return m, nil
}

// FileName is the name an install gives the file: the name tag, else
// the alt, else the url's last element, else the sha256 — reduced to its
// last path element, so it never leaves the directory it is put in.
func (m FileMetadata) FileName() string {
	for _, n := range []string{m.Name, m.Alt, lastElem(m.URL)} {
		n = path.Base(strings.ReplaceAll(strings.TrimSpace(n), "\\", "/"))
		if n != "" && n != "." && n != ".." && n != "/" && !strings.ContainsAny(n, "\x00:") && len(n) <= 255 {
			return n
		}
	}
	return m.SHA256
}

func lastElem(u string) string {
	if i := strings.LastIndex(u, "/"); i >= 0 {
		return u[i+1:]
	}
	return ""
}
