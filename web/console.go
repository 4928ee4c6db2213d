package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/internal/httpauth"
)

// Consent is the owner's consent store (*consent.Consent satisfies it).
type Consent interface {
	List(ctx context.Context, status consent.Status) ([]consent.Approval, error)
	Approve(ctx context.Context, id string) (consent.Approval, error)
	Deny(ctx context.Context, id, reason string) (consent.Approval, error)
	Revoke(ctx context.Context, agent, reason string) (consent.Revocation, error)
	RevokedList(ctx context.Context) ([]consent.Revocation, error)
	Get(ctx context.Context, id string) (consent.Approval, error)
}

var _ Consent = (*consent.Consent)(nil)

// The owner console (/console): the operator signs in with the node's API
// token and sees every agent's requests; an owner signs in with their own
// Nostr key (NIP-07 in the browser, NIP-98 on the sign-in call,
// console_owner.go) and sees and decides only for the agents they own.
// Either way the browser gets a session cookie (HttpOnly,
// SameSite=Strict, scoped to /console); every form carries the session's
// CSRF token as well. Sessions live in memory and end after sessionTTL
// or at sign-out.
const (
	sessionCookie = "agentnode_console"
	sessionTTL    = 12 * time.Hour
	maxSessions   = 64
)

// sessions are the console's signed-in browsers.
type sessions struct {
	mu sync.Mutex
	m  map[string]session // by session id
}

type session struct {
	csrf    string
	expires time.Time
	owner   string // the signed-in owner's hex key; "" is the operator (API token)
}

func newSessions() *sessions { return &sessions{m: map[string]session{}} }

// open starts a session for owner ("" the operator) and returns its id.
func (s *sessions) open(owner string) (id string, sess session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for k, v := range s.m {
		if now.After(v.expires) || len(s.m) >= maxSessions {
			delete(s.m, k)
		}
	}
	id, sess = randomHex(), session{csrf: randomHex(), expires: now.Add(sessionTTL), owner: owner}
	s.m[id] = sess
	return id, sess
}

// get returns r's live session.
func (s *sessions) get(r *http.Request) (string, session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return "", session{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.m[c.Value]
	if !ok || time.Now().After(sess.expires) {
		delete(s.m, c.Value)
		return "", session{}, false
	}
	return c.Value, sess, true
}

func (s *sessions) close(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

func randomHex() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// consoleData is the console page.
type consoleData struct {
	SignedIn bool
	Error    string
	CSRF     string
	Enabled  bool // a consent store is wired
	Pending  []consent.Approval
	Decided  []consent.Approval
	Revoked  []consent.Revocation
	Notice   string
	// TokenFile is where the operator's API token is.
	TokenFile string
	// Owner is the signed-in owner's hex key ("" for the operator) and
	// Agents the agents of this node they own.
	Owner  string
	Agents []agentd.Agent
	// MCP are the kind-4200 servers of the agents the session manages
	// (console_mcp.go).
	MCP []consoleMCP
}

// mountConsole registers the owner console on mux.
func (s *Site) mountConsole(mux *http.ServeMux) {
	mux.Handle("GET /console", s.page(s.consolePage))
	mux.Handle("POST /console/login", secured(http.HandlerFunc(s.consoleLogin)))
	mux.Handle("POST /console/nostr-login", secured(http.HandlerFunc(s.nostrLogin)))
	mux.Handle("POST /console/logout", s.consoleAction(func(r *http.Request, _ session) (string, error) { return "", nil }))
	mux.Handle("POST /console/approvals/{id}/approve", s.consoleAction(func(r *http.Request, sess session) (string, error) {
		if err := s.mayDecide(r.Context(), sess, r.PathValue("id")); err != nil {
			return "", err
		}
		_, err := s.cfg.Consent.Approve(r.Context(), r.PathValue("id"))
		return "approved " + r.PathValue("id"), err
	}))
	mux.Handle("POST /console/approvals/{id}/deny", s.consoleAction(func(r *http.Request, sess session) (string, error) {
		if err := s.mayDecide(r.Context(), sess, r.PathValue("id")); err != nil {
			return "", err
		}
		_, err := s.cfg.Consent.Deny(r.Context(), r.PathValue("id"), strings.TrimSpace(r.FormValue("reason")))
		return "denied " + r.PathValue("id"), err
	}))
	mux.Handle("POST /console/revoke", s.consoleAction(func(r *http.Request, sess session) (string, error) {
		agent := strings.TrimSpace(r.FormValue("agent"))
		if err := s.mayRevoke(sess, agent); err != nil {
			return "", err
		}
		_, err := s.cfg.Consent.Revoke(r.Context(), agent, strings.TrimSpace(r.FormValue("reason")))
		return "revoked " + agent, err
	}))
	s.mountConsoleMCP(mux) // console_mcp.go
}

// consolePage renders /console: the sign-in form, or the owner's queue.
func (s *Site) consolePage(r *http.Request) (view, error) {
	_, sess, ok := s.sessions.get(r)
	d := consoleData{SignedIn: ok, Enabled: s.cfg.Consent != nil, CSRF: sess.csrf, Notice: clipNotice(r.FormValue("done")),
		TokenFile: s.cfg.TokenFile, Owner: sess.owner}
	if ok && sess.owner != "" {
		d.Agents = s.ownedBy(sess.owner)
	}
	if ok {
		d.MCP = s.mcpOf(sess, d.Agents) // console_mcp.go
	}
	if !ok || !d.Enabled {
		return view{name: "console", title: "Owner console", data: d}, nil
	}
	all, err := s.cfg.Consent.List(r.Context(), "")
	if err != nil {
		return view{}, err
	}
	mine := ownsFilter(sess.owner, d.Agents)
	for _, a := range all {
		if !mine(a.Agent) {
			continue
		}
		if a.Status == consent.StatusPending {
			d.Pending = append(d.Pending, a)
		} else {
			d.Decided = append(d.Decided, a)
		}
	}
	revoked, err := s.cfg.Consent.RevokedList(r.Context())
	if err != nil {
		return view{}, err
	}
	for _, rv := range revoked {
		if mine(rv.Agent) {
			d.Revoked = append(d.Revoked, rv)
		}
	}
	return view{name: "console", title: "Owner console", data: d}, nil
}

// consoleLogin checks the API token and opens a session.
func (s *Site) consoleLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if s.cfg.Token == "" || httpauth.Equal(s.cfg.Token, strings.TrimSpace(r.FormValue("token"))) != nil {
		s.render(w, view{name: "console", title: "Owner console", status: http.StatusUnauthorized,
			data: consoleData{Error: "That is not this node's API token (" + s.cfg.TokenFile + ").", TokenFile: s.cfg.TokenFile}})
		return
	}
	s.startSession(w, r, "")
	http.Redirect(w, r, "/console", http.StatusSeeOther)
}

// startSession opens a session for owner ("" the operator) and sets its
// cookie on w.
func (s *Site) startSession(w http.ResponseWriter, r *http.Request, owner string) {
	id, _ := s.sessions.open(owner)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/console", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(sessionTTL.Seconds()), Secure: r.TLS != nil})
}

// consoleAction runs one signed-in, CSRF-checked POST and goes back to
// the console; a logout (empty notice, no error) ends the session.
func (s *Site) consoleAction(do func(r *http.Request, sess session) (string, error)) http.Handler {
	return s.signedInAction(true, do)
}

// signedInAction is consoleAction; needConsent: refused (404) when no
// consent store is wired.
func (s *Site) signedInAction(needConsent bool, do func(r *http.Request, sess session) (string, error)) http.Handler {
	return secured(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
		id, sess, ok := s.sessions.get(r)
		if !ok || subtle.ConstantTimeCompare([]byte(sess.csrf), []byte(r.FormValue("csrf"))) != 1 {
			http.Error(w, "sign in to the console first (or the form was stale)", http.StatusForbidden)
			return
		}
		if needConsent && s.cfg.Consent == nil {
			http.Error(w, "no consent store on this node", http.StatusNotFound)
			return
		}
		notice, err := do(r, sess)
		switch {
		case err != nil:
			notice = "failed: " + err.Error()
		case notice == "":
			s.sessions.close(id)
			http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/console", MaxAge: -1})
		}
		http.Redirect(w, r, "/console?done="+url.QueryEscape(notice), http.StatusSeeOther)
	}))
}

// clipNotice bounds the notice echoed from the query string (it is
// escaped by the template like every other string).
func clipNotice(s string) string {
	if len(s) > 300 {
		return strings.ToValidUTF8(s[:300], "")
	}
	return s
}
