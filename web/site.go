package web

import (
	"bytes"
	"context"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/internal/nip98"
	"github.com/agentnode/agentnode/lessons"
)

// Store reads events (*relay.Relay satisfies it). Filters with Search
// are NIP-50 queries.
type Store interface {
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
}

// Directory is the agent directory (*directory.Directory satisfies it):
// an index the pages read a page at a time, never whole.
type Directory interface {
	Search(q directory.Query) []directory.Agent
	SearchPage(q directory.Query) ([]directory.Agent, int)
	Get(id string) (directory.Agent, bool)
	Metrics(id string) (directory.Metrics, bool)
	Definitions(cur directory.DefCursor, n int) ([]directory.Definition, directory.DefCursor)
	Definition(id string) (directory.Definition, bool)
	DefinitionCount() int
	RunningOf(id string) directory.Running
	AgentsOf(id string, n int) []directory.Agent
}

// Lessons judges an agent's lessons under the node's trust policy
// (*agentd.Daemon satisfies it). It fails for an agent that does not run
// on this node: its lessons are then listed without a decision.
type Lessons interface {
	Effective(ctx context.Context, agent string) (lessons.Effective, error)
}

// Registry is the capability registry (*registry.Registry satisfies it).
type Registry interface {
	Search(ctx context.Context, query string, f registry.Filters) ([]registry.Entry, error)
}

// Config is what a Site reads. Store is required; a nil Directory,
// Lessons or Registry leaves its part of the pages empty.
type Config struct {
	Store     Store
	Directory Directory
	Lessons   Lessons
	Registry  Registry
	// Files lists a local agent's definition files (nil: none shown).
	Files Files
	// Consent is the owner's consent store for the console (/console);
	// Token is the node's API token the owner signs in with. With no
	// token the console refuses every sign-in.
	Consent Consent
	Token   string
	// Installed names each local agent's owner: an owner who signs in with
	// their Nostr key manages only those agents (nil: owners cannot sign in).
	Installed Installed
	// MCP lists the local agents' kind-4200 MCP servers and takes the
	// owner's decisions on them in the console (nil: not shown).
	MCP MCPServers
	// TokenFile is where the operator finds Token, named in the sign-in
	// hint ("": "<data>/agents/api.token").
	TokenFile string
	// Name is the node's name in page titles ("" : "agentnode").
	Name string
	// Version is shown in the footer.
	Version string
	// PageSize is how many agents or definitions one directory page
	// lists (0: DefaultPageSize).
	PageSize int
	// MaxRenders bounds the pages built at once (0: DefaultMaxRenders); a
	// request waits up to RenderWait (0: DefaultRenderWait) for a turn,
	// then gets 503 with Retry-After.
	MaxRenders int
	RenderWait time.Duration
	Logger     *slog.Logger
}

// Defaults.
const (
	DefaultPageSize   = 50 // agents and definitions a directory page lists
	DefaultMaxRenders = 4
	DefaultRenderWait = 2 * time.Second
)

// ContentSecurityPolicy is sent with every page: scripts, styles and
// images come from the node only (images also over https) — no inline
// script or handler runs, so nothing a stranger writes can; the node's
// scripts (static/*.js: copy buttons, the console's Nostr sign-in) call
// only the node; forms post only to the node; nothing may frame the page.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; " +
	"img-src 'self' https:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Site serves the pages. It is safe for concurrent use.
type Site struct {
	cfg      Config
	pages    map[string]*template.Template
	log      *slog.Logger
	sessions *sessions     // the owner console's
	nip98    *nip98.Guard  // owners' sign-in (NIP-98), against replays
	renders  chan struct{} // a token per page being built
}

// New parses the embedded templates; it panics if they do not parse (a
// build defect, caught by every test).
func New(cfg Config) *Site {
	if cfg.Name == "" {
		cfg.Name = "agentnode"
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = DefaultPageSize
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxRenders <= 0 {
		cfg.MaxRenders = DefaultMaxRenders
	}
	if cfg.TokenFile == "" {
		cfg.TokenFile = "<data>/agents/api.token"
	}
	if cfg.RenderWait <= 0 {
		cfg.RenderWait = DefaultRenderWait
	}
	return &Site{cfg: cfg, pages: parsePages(), log: cfg.Logger, sessions: newSessions(), nip98: nip98.NewGuard(nil),
		renders: make(chan struct{}, cfg.MaxRenders)}
}

// pageNames are the templates/<name>.html pages, each rendered inside
// templates/layout.html.
var pageNames = []string{"index", "agent", "definition", "lesson", "lessons", "capabilities", "search", "notfound", "console"}

func parsePages() map[string]*template.Template {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"))
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		pages[name] = template.Must(template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+name+".html"))
	}
	return pages
}

// Mount registers the pages on mux. next serves what arrives on / but is
// no page: websocket upgrades and NIP-11 requests (the relay).
func (s *Site) Mount(mux *http.ServeMux, next http.Handler) {
	mux.Handle("GET /{$}", s.index(next))
	mux.Handle("GET /agents/{id}", s.page(s.agentPage))
	mux.Handle("GET /definitions/{id}", s.page(s.definitionPage))
	mux.Handle("GET /lessons", s.page(s.lessonsPage))
	mux.Handle("GET /lessons/{id}", s.page(s.lessonView))
	mux.Handle("GET /capabilities", s.page(s.capabilitiesPage))
	mux.Handle("GET /search", s.page(s.searchPage))
	s.mountConsole(mux)
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", secured(http.StripPrefix("/static/", http.FileServerFS(static))))
}

// index serves the directory, unless the request is for the relay.
func (s *Site) index(next http.Handler) http.Handler {
	dir := s.page(s.directoryPage)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" || strings.Contains(r.Header.Get("Accept"), "application/nostr+json") {
			next.ServeHTTP(w, r)
			return
		}
		dir.ServeHTTP(w, r)
	})
}

// view is what a page handler returns: the template and its data, or
// the status of a page that is not there.
type view struct {
	name   string
	title  string
	status int
	data   any
}

// page adapts a page handler: it waits for a turn (renders.go), renders
// the view into a buffer first (a template error never sends half a page)
// and sets the headers.
func (s *Site) page(fn func(r *http.Request) (view, error)) http.Handler {
	return secured(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		release, ok := s.turn(r.Context())
		if !ok {
			busy(w)
			return
		}
		defer release()
		v, err := fn(r)
		if err != nil {
			s.log.Error("web page failed", "path", r.URL.Path, "err", err)
			http.Error(w, "the page could not be built", http.StatusInternalServerError)
			return
		}
		s.render(w, v)
	}))
}

// layoutData is what layout.html reads around every page.
type layoutData struct {
	Site    string
	Title   string
	Version string
	Query   string
	Page    any
}

func (s *Site) render(w http.ResponseWriter, v view) {
	var buf bytes.Buffer
	data := layoutData{Site: s.cfg.Name, Title: v.title, Version: s.cfg.Version, Page: v.data}
	if q, ok := v.data.(interface{ SearchQuery() string }); ok {
		data.Query = q.SearchQuery()
	}
	if err := s.pages[v.name].ExecuteTemplate(&buf, "layout.html", data); err != nil {
		s.log.Error("web template failed", "page", v.name, "err", err)
		http.Error(w, "the page could not be built", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if v.status != 0 {
		w.WriteHeader(v.status)
	}
	w.Write(buf.Bytes())
}

// notFound is the view of a missing agent, definition or page.
func notFound(what string) view {
	return view{name: "notfound", title: "Not found", status: http.StatusNotFound, data: what}
}

// secured sets the security headers of every answer.
func secured(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}
