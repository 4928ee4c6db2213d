package registry

import (
	"time"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// Entry is one published package version.
type Entry struct {
	URI       string    `json:"uri"` // did:nuwa:cap:<name>@<version>
	Name      string    `json:"name"`
	Version   string    `json:"version"`
	Author    string    `json:"author"` // hex pubkey
	EventID   string    `json:"event_id"`
	Naddr     string    `json:"naddr"`
	SchemaURI string    `json:"schema_uri"` // the package schema's $id (schema tag)
	CreatedAt time.Time `json:"created_at"`
	// Metadata and Tools are read from the file when it is indexed.
	Metadata acp.Metadata `json:"metadata"`
	Tools    []string     `json:"tools"`
	// Package is the fully parsed and checked package (acp.FromEvent):
	// set by Resolve, nil in Search results.
	Package *acp.Package `json:"-"`
	Event   *nostr.Event `json:"-"`
	// Alternatives lists the other authors who publish the same name (for
	// Resolve without an explicit author): the rule in docs/REGISTRY.md
	// chose this entry over them. Empty from Search.
	Alternatives []Alternative `json:"alternatives,omitempty"`
}

// Alternative is another author's claim on a resolved name: its best
// version matching the reference.
type Alternative struct {
	Author    string    `json:"author"`
	Version   string    `json:"version"`
	EventID   string    `json:"event_id"`
	Naddr     string    `json:"naddr"`
	FirstSeen time.Time `json:"first_published"` // the author's earliest event for the name
}

// SHA256 returns the sha256 of the package file (the event's x tag).
func (e *Entry) SHA256() string { return events.ContentSHA256(e.Event.Content) }

// newEntry builds the index entry of a checked event.
func newEntry(evt *nostr.Event, c *events.Capability, m acp.Metadata, tools []string) *Entry {
	return &Entry{
		URI: acp.CapURI(c.Name, c.Version), Name: c.Name, Version: c.Version,
		Author: evt.PubKey, EventID: evt.ID, Naddr: naddrOf(evt.PubKey, c.D()),
		SchemaURI: c.SchemaURI, CreatedAt: evt.CreatedAt.Time(), Metadata: m, Tools: tools, Event: evt,
	}
}

func naddrOf(pubkey, d string) string {
	s, err := nip19.EncodeEntity(pubkey, events.KindCapability, d, nil)
	if err != nil {
		return ""
	}
	return s
}

// alternative summarises e as another author's claim.
func (e *Entry) alternative(first time.Time) Alternative {
	return Alternative{Author: e.Author, Version: e.Version, EventID: e.EventID, Naddr: e.Naddr, FirstSeen: first}
}
