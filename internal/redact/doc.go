// Package redact hides the secrets a URL can carry before the URL is
// shown: in /metrics labels, logs, the web UI and error messages. A
// relay or peer URL may hold credentials (ws://user:pw@host/) or a token
// in its query (?token=t); an operator pastes such URLs into --peer, and
// /metrics is readable by anyone.
//
//	redact.URL("ws://user:pw@relay.example/?token=t") // "ws://***@relay.example/?token=***"
//	redact.Text(err.Error())                            // every URL in the text redacted
//
// The host, port, path and query keys stay: they tell which peer is
// meant and leak nothing an observer of the connection could not see.
package redact
