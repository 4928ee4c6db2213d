// Package web is the node's web page for people: a server-rendered
// directory of agents and definitions, each agent's page (its two-way
// owner verification with the evidence, its definition, capabilities,
// lessons with the trust decision and reason, evaluations), the capability
// registry and NIP-50 search, recent lessons and each lesson's comments,
// and the owner console (consents), where the operator signs in with the
// API token and an owner with their own Nostr key (NIP-07, NIP-98) and
// manages only their agents. Pages fit a 390 px phone.
//
// Everything is rendered on the server with html/template from the store
// (no client framework, no JavaScript needed to read); the stylesheet is
// embedded in the binary; every user-supplied string is escaped by the
// templates (lessons are untrusted text); every answer carries a strict
// Content-Security-Policy that runs no script but the node's own static files.
//
// The site reads through small interfaces (Store, Directory, Lessons,
// Registry) that the embedded relay, the agent directory, the agent daemon
// and the capability registry satisfy; cmd wires them in. Mount registers
// the pages on a mux; the index page hands websocket upgrades and NIP-11
// requests on / to the relay:
//
//	site := web.New(web.Config{Store: rel, Directory: dir, Lessons: daemon, Registry: reg})
//	mux := http.NewServeMux()
//	site.Mount(mux, rel) // rel also serves what is not a page
//	mux.Handle("/", rel)
package web
