package relay

import (
	"github.com/nbd-wtf/go-nostr/nip11"
)

// SupportedNIPs is every NIP the relay implements, each backed by a test in
// this package or in the interop suite:
//
//	1 basic protocol · 9 deletions (stay deleted) · 11 this document ·
//	22 comments (lesson comments validated) · 40 expiration · 42 AUTH (khatru) ·
//	45 COUNT (bounded) · 50 search over definitions, lessons, comments ·
//	70 protected events (khatru)
var SupportedNIPs = []int{1, 9, 11, 22, 40, 42, 45, 50, 70}

// SoftwareURL identifies the relay software in NIP-11.
const SoftwareURL = "https://github.com/agentnode/agentnode"

// info builds the NIP-11 document from the configuration in force.
func (r *Relay) info() *nip11.RelayInformationDocument {
	lim := r.cfg.Limits
	doc := &nip11.RelayInformationDocument{
		Name:        r.cfg.Name,
		Description: r.cfg.Description,
		Software:    SoftwareURL,
		Version:     r.cfg.Version,
		Limitation: &nip11.RelayLimitationDocument{
			MaxMessageLength: lim.MaxMessageBytes,
			MaxLimit:         lim.MaxLimit,
			MaxEventTags:     lim.MaxEventTags,
			MaxContentLength: lim.MaxContentBytes,
		},
	}
	if doc.Name == "" {
		doc.Name = "agentnode"
	}
	if doc.Description == "" {
		doc.Description = "agentnode: a node of the Nostr agent network (NIP-AE definitions, nudges, lessons, comments, profiles, owner claims; capability packages, heartbeats, evaluations; agents answer NIP-17 DMs)"
	}
	if doc.Version == "" {
		doc.Version = "dev"
	}
	for _, n := range SupportedNIPs {
		doc.AddSupportedNIP(n)
	}
	return doc
}
