package metrics

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// maxRoutes bounds the route label's values: http.ServeMux patterns are a
// fixed set, but a handler that sets Request.Pattern itself could add
// more; beyond the bound they count as "other".
const maxRoutes = 128

// httpMetrics count the HTTP requests by route pattern, method and status.
type httpMetrics struct {
	requests *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	routes   *routeSet
}

func newHTTPMetrics() httpMetrics {
	return httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agentnode_http_requests_total",
			Help: "HTTP requests by route pattern (never the raw path: \"websocket\" for upgrades, \"unmatched\" when no route took it), method and status code."},
			[]string{"route", "method", "code"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agentnode_http_request_seconds",
			Help:    "HTTP request to the end of its answer, by route pattern and status class (2xx, 4xx...); websocket upgrades are not timed.",
			Buckets: latencyBuckets}, []string{"route", "class"}),
		routes: newRouteSet(maxRoutes),
	}
}

func (h httpMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{h.requests, h.seconds}
}

// HTTP wraps next, counting and timing every request by the route pattern
// that served it (Request.Pattern as the innermost http.ServeMux set it),
// so the labels stay a fixed set whatever paths strangers ask for. The
// calls to agents over HTTP (/acp, CAP, MCP, chat) are observed as agent
// calls too (agentnode_agent_call_seconds).
func (m *Metrics) HTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		m.observeHTTP(r, rec, time.Since(start))
	})
}

// observeHTTP records one finished request.
func (m *Metrics) observeHTTP(r *http.Request, rec *statusRecorder, d time.Duration) {
	route := m.http.routes.label(routeOf(r, rec))
	code := rec.code()
	m.http.requests.WithLabelValues(route, methodLabel(r.Method), strconv.Itoa(code)).Inc()
	if rec.hijacked {
		return // a websocket: its lifetime is no request latency
	}
	m.http.seconds.WithLabelValues(route, strconv.Itoa(code/100)+"xx").Observe(d.Seconds())
	if t := agentTransport(r, route); t != "" {
		var err error
		if code >= 400 {
			err = errHTTPStatus
		}
		m.AgentCall(t, err, d)
	}
}

// routeOf names the request's route: its pattern, or "websocket" for an
// upgrade, or "unmatched".
func routeOf(r *http.Request, rec *statusRecorder) string {
	switch {
	case rec.hijacked || rec.status == http.StatusSwitchingProtocols:
		return "websocket"
	case r.Pattern == "":
		return "unmatched"
	}
	return r.Pattern
}

// agentTransport is the transport of an agent call served over HTTP, or "".
func agentTransport(r *http.Request, route string) string {
	if r.Method != http.MethodPost {
		return ""
	}
	p := r.URL.Path
	switch {
	case p == "/acp":
		return "acp"
	case strings.HasPrefix(p, "/cap/agents/"):
		return "cap"
	case strings.HasPrefix(route, "POST /mcp") || strings.HasPrefix(route, "/mcp"):
		return "mcp"
	case strings.HasPrefix(p, "/api/agents/") && strings.HasSuffix(p, "/chat"):
		return "chat"
	}
	return ""
}

// methods are the HTTP methods labelled as themselves; others are "other".
var methods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true}

func methodLabel(m string) string {
	if methods[m] {
		return m
	}
	return "other"
}

// statusRecorder remembers the status written through it; it passes
// Flush, Hijack and Unwrap (http.ResponseController) through.
type statusRecorder struct {
	http.ResponseWriter
	status   int
	hijacked bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// code is the status sent (200 when the handler wrote nothing).
func (s *statusRecorder) code() int {
	if s.hijacked {
		return http.StatusSwitchingProtocols
	}
	if s.status == 0 {
		return http.StatusOK
	}
	return s.status
}

func (s *statusRecorder) Flush() {
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}

func (s *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err == nil {
		s.hijacked = true
	}
	return c, brw, err
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
