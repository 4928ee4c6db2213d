package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionGate bounds the MCP sessions of one endpoint kind (one gate for
// /mcp, one for the agent endpoints together):
//
//   - at most max live sessions (503 with Retry-After beyond);
//   - at most perIP of them opened from one client address (429 with
//     Retry-After beyond), so that one address cannot take every place;
//   - a session that made no call since initialize is closed once it is
//     older than unused (checked when a session is asked for), so that a
//     flood of bare initialize frees its places quickly instead of after
//     the idle timeout.
//
// It counts the sessions of the servers it tracks: the registry's shared
// server, and each agent session's own server once the request that
// created it has returned. The go-sdk (v1.2.0) has an idle timeout
// (StreamableHTTPOptions.SessionTimeout) but no cap.
type sessionGate struct {
	max, perIP int
	unused     time.Duration
	clientIP   func(*http.Request) string
	now        func() time.Time

	mu       sync.Mutex
	pending  int                  // session-creating requests being served
	pendings map[string]int       // of them, by client address
	servers  map[*mcp.Server]bool // true: shared, never pruned
	opened   map[string]*opened   // by session id: the sessions this gate let in
}

// opened is what the gate remembers of a session it let in.
type opened struct {
	ip   string
	at   time.Time
	used bool // a call (anything but notifications/initialized) was made
}

// newServerSlot is where serverFor leaves the server it built for the
// request being admitted.
type newServerSlot struct{}

func newSessionGate(opts Options) *sessionGate {
	return &sessionGate{max: opts.MaxSessions, perIP: opts.MaxSessionsPerIP, unused: opts.SessionUnused,
		clientIP: opts.ClientIP, now: opts.now, pendings: map[string]int{},
		servers: map[*mcp.Server]bool{}, opened: map[string]*opened{}}
}

// share tracks a server that every session of an endpoint shares.
func (g *sessionGate) share(s *mcp.Server) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.servers[s] = true
}

// created records, from serverFor, the server built for r's new session.
func created(r *http.Request, s *mcp.Server) {
	if slot, ok := r.Context().Value(newServerSlot{}).(**mcp.Server); ok {
		*slot = s
	}
}

// admit serves next, first refusing a request that would open a session
// (a POST without Mcp-Session-Id) beyond the caps, and noting a call on
// an existing session.
func (g *sessionGate) admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" || r.Method != http.MethodPost {
			g.noteUse(id, r)
			next.ServeHTTP(w, r)
			return
		}
		ip := addrKey(g.clientIP(r))
		if refusal := g.reserve(ip); refusal != nil {
			refusal.answer(w)
			return
		}
		var built *mcp.Server
		rw := &openingWriter{ResponseWriter: w, opened: func(id string) { g.opened1(ip, id, built) }}
		defer func() { g.release(ip, built, rw.counted) }()
		next.ServeHTTP(rw, r.WithContext(context.WithValue(r.Context(), newServerSlot{}, &built)))
	})
}

// openingWriter tells the gate the id of the session a request opened as
// soon as the answer's header is written: before the client can read the
// answer and use the session.
type openingWriter struct {
	http.ResponseWriter
	opened  func(id string)
	wrote   bool // the header is written
	counted bool // opened was called: the reservation is spent
}

func (w *openingWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if id := w.Header().Get("Mcp-Session-Id"); id != "" && code < 300 {
		w.counted = true
		w.opened(id)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *openingWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK) // once: what net/http does on a first Write
	return w.ResponseWriter.Write(b)
}

// Flush and Unwrap keep the SDK's event streams working through the wrapper.
func (w *openingWriter) Flush() {
	w.WriteHeader(http.StatusOK)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *openingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// refusal is why a session was not opened.
type refusal struct {
	status     int
	retryAfter time.Duration
	reason     string
}

func (f *refusal) answer(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(f.retryAfter/time.Second))))
	http.Error(w, f.reason, f.status)
}

// reserve counts a session-creating request from ip in, if there is room;
// else it says why not.
func (g *sessionGate) reserve(ip string) *refusal {
	stale := g.reserveLocked(ip)
	closeAll(stale.sessions)
	return stale.refusal
}

// reservation is reserve's outcome: a refusal (nil: admitted) and the
// unused sessions found expired, to close once g.mu is released.
type reservation struct {
	refusal  *refusal
	sessions []*mcp.ServerSession
}

func (g *sessionGate) reserveLocked(ip string) reservation {
	g.mu.Lock()
	defer g.mu.Unlock()
	live, stale := g.prune()
	switch {
	case g.perIP > 0 && g.fromIP(ip)+g.pendings[ip] >= g.perIP:
		return reservation{&refusal{http.StatusTooManyRequests, g.unused,
			"mcp: too many sessions from your address (" + strconv.Itoa(g.perIP) + "): close sessions you no longer use (DELETE); one that makes no call is closed after " + g.unused.String()}, stale}
	case g.max > 0 && live-len(stale)+g.pending >= g.max:
		return reservation{&refusal{http.StatusServiceUnavailable, 10 * time.Second,
			"mcp: too many sessions (" + strconv.Itoa(g.max) + "): retry later, and close sessions you no longer use (DELETE)"}, stale}
	}
	g.pending++
	g.pendings[ip]++
	return reservation{nil, stale}
}

// opened1 turns ip's reservation into session id, served by built (nil:
// a shared server).
func (g *sessionGate) opened1(ip, id string, built *mcp.Server) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.unreserve(ip)
	if built != nil {
		g.servers[built] = false
	}
	g.opened[id] = &opened{ip: ip, at: g.now()}
}

// release ends a session-creating request from ip; built is the
// per-session server it made (nil: none, or a shared one); spent: the
// reservation already became a session (opened1).
func (g *sessionGate) release(ip string, built *mcp.Server, spent bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !spent {
		g.unreserve(ip)
	}
	if built != nil {
		g.servers[built] = false
	}
}

// unreserve gives back ip's reservation. g.mu is held.
func (g *sessionGate) unreserve(ip string) {
	g.pending--
	if g.pendings[ip]--; g.pendings[ip] <= 0 {
		delete(g.pendings, ip)
	}
}

// noteUse marks session id used when r is a call (anything but the
// notifications/initialized that follows initialize).
func (g *sessionGate) noteUse(id string, r *http.Request) {
	if id == "" || (r.Method == http.MethodPost && isInitialized(r)) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if o := g.opened[id]; o != nil {
		o.used = true
	}
}

// isInitialized reports whether r's body (buffered by httplimit.Buffer)
// is the notifications/initialized notification; the body is put back.
func isInitialized(r *http.Request) bool {
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	var msg struct {
		Method string `json:"method"`
	}
	return err == nil && json.Unmarshal(b, &msg) == nil && msg.Method == "notifications/initialized"
}

// prune walks the tracked servers' sessions: it forgets per-session
// servers and opened records whose session has ended, and returns the
// number of live sessions and those unused for longer than g.unused
// (still live: the caller closes them). g.mu is held.
func (g *sessionGate) prune() (live int, stale []*mcp.ServerSession) {
	alive := map[string]bool{}
	for s, shared := range g.servers {
		k := 0
		for ss := range s.Sessions() {
			k++
			alive[ss.ID()] = true
			if o := g.opened[ss.ID()]; o != nil && g.expired(o) {
				stale = append(stale, ss)
				delete(g.opened, ss.ID())
			}
		}
		if k == 0 && !shared {
			delete(g.servers, s)
		}
		live += k
	}
	for id := range g.opened {
		if !alive[id] {
			delete(g.opened, id)
		}
	}
	return live, stale
}

// expired: o made no call and is older than g.unused.
func (g *sessionGate) expired(o *opened) bool {
	return !o.used && g.unused > 0 && g.now().Sub(o.at) >= g.unused
}

// fromIP counts the tracked sessions opened from ip. g.mu is held.
func (g *sessionGate) fromIP(ip string) int {
	n := 0
	for _, o := range g.opened {
		if o.ip == ip {
			n++
		}
	}
	return n
}

func closeAll(sessions []*mcp.ServerSession) {
	for _, ss := range sessions {
		ss.Close()
	}
}

// addrKey is what the per-address cap counts: the IP, or for IPv6 its
// /64 (one host's usual allocation: a client with a /64 has 2^64
// addresses, not one each).
func addrKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is6() || a.Is4In6() {
		return ip
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// RemoteIP is the default Options.ClientIP: the IP of the connection's
// peer (r.RemoteAddr), whatever headers say.
func RemoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
