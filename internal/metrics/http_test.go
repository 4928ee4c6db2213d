package metrics

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/agentnode/agentnode/internal/testkit"
)

// gather returns the registry's families by name.
func gather(t testing.TB, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// newServer serves mux through m.HTTP on a real socket.
func newServer(t *testing.T, m *Metrics) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.PathValue("id")) })
	mux.HandleFunc("POST /acp", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) })
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "first\n")
		if err := http.NewResponseController(w).Flush(); err != nil {
			http.Error(w, "no flush", 500)
		}
	})
	srv := httptest.NewServer(m.HTTP(mux))
	t.Cleanup(srv.Close)
	return srv
}

// TestMetrics_HTTP: requests are counted by pattern, never by path;
// unknown paths are "unmatched"; an agent call over HTTP is observed with
// its transport; Flush passes through the recorder.
func TestMetrics_HTTP(t *testing.T) {
	m := New(Sources{})
	srv := newServer(t, m)
	for i := range 50 {
		mustGet(t, srv.URL+fmt.Sprintf("/items/%d", i))
		mustGet(t, srv.URL+fmt.Sprintf("/nowhere/%d", i))
	}
	resp, err := http.Post(srv.URL+"/acp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = http.Get(srv.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	resp.Body.Close()
	if line != "first\n" {
		t.Errorf("a flushed stream through the middleware read %q", line)
	}
	// the stream's request is counted when its handler returns, which may
	// be after the client read its line and left: wait for it
	want := map[string]float64{"GET /items/{id} 200": 50, "unmatched 404": 50, "POST /acp 400": 1, "GET /stream 200": 1}
	var fams map[string]*dto.MetricFamily
	testkit.WaitFor(t, 10*time.Second, fmt.Sprintf("requests by route and code %v", want), func() bool {
		fams = gather(t, m)
		got := map[string]float64{}
		for _, s := range fams["agentnode_http_requests_total"].GetMetric() {
			l := labels(s)
			got[l["route"]+" "+l["code"]] += s.GetCounter().GetValue()
		}
		return fmt.Sprint(got) == fmt.Sprint(want)
	})
	calls := fams["agentnode_agent_call_seconds"].GetMetric()
	if len(calls) != 1 || labels(calls[0])["transport"] != "acp" || labels(calls[0])["result"] != "error" {
		t.Errorf("agent calls: %v", calls)
	}
}

// TestRouteSet_Bounded: past its bound every new route is "other".
func TestRouteSet_Bounded(t *testing.T) {
	s := newRouteSet(3)
	for i := range 10 {
		s.label(fmt.Sprint(i))
	}
	if got := s.label("new"); got != "other" {
		t.Errorf("a route past the bound is %q", got)
	}
	if got := s.label("1"); got != "1" {
		t.Errorf("a known route is %q", got)
	}
}

func mustGet(t testing.TB, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// BenchmarkHTTP is the middleware's cost per request (compare
// BenchmarkHTTP/bare).
func BenchmarkHTTP(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	m := New(Sources{})
	for name, h := range map[string]http.Handler{"bare": mux, "metered": m.HTTP(mux)} {
		b.Run(name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/items/42", nil)
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
