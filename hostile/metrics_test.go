package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agentnode/agentnode/internal/testkit"
)

// families scrapes n's /metrics with the Prometheus text parser.
func (n *node) families(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + n.addr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	return fams
}

// labelValues are the values of label over the family's samples.
func labelValues(f *dto.MetricFamily, label string) map[string]bool {
	out := map[string]bool{}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out[l.GetValue()] = true
			}
		}
	}
	return out
}

// histogramCount is the observations of the family's samples whose labels
// include want.
func histogramCount(f *dto.MetricFamily, want map[string]string) uint64 {
	var n uint64
	for _, m := range f.GetMetric() {
		if hasLabels(m, want) {
			n += m.GetHistogram().GetSampleCount()
		}
	}
	return n
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// traffic makes n observe one of each: a publish, a REQ up to EOSE, HTTP
// requests, an agent call over /acp.
func traffic(t *testing.T, n *node) {
	t.Helper()
	c := n.client(t)
	sk := testkit.NewKey(t).SK
	if _, err := publish(c, sk, 4199, nostr.Tags{{"title", "Metered"}}, "", 10*time.Second); err != nil {
		t.Fatalf("publish: %v", err)
	}
	if _, err := publish(c, sk, 4199, nostr.Tags{{"role", "no title"}}, "", 10*time.Second); err == nil {
		t.Fatal("a definition without a title was stored")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Query(ctx, nostr.Filters{{Kinds: []int{4199}, Limit: 5}}); err != nil {
		t.Fatalf("REQ: %v", err)
	}
	httpGet(t, n, "/healthz")
	httpGet(t, n, "/no/such/page")
	hc := http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Post("http://"+n.addr+"/acp", "application/json",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"agent/list","params":{}}`))
	if err != nil {
		t.Fatalf("POST /acp: %v", err)
	}
	resp.Body.Close()
}

// metricName finds the series names in a PromQL expression.
var metricName = regexp.MustCompile(`\b(agentnode_[a-z0-9_]+|go_[a-z0-9_]+|process_[a-z0-9_]+)\b`)

// dashboardMetrics are the metric names deploy/grafana/agentnode.json
// queries, by panel title.
func dashboardMetrics(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("../deploy/grafana/agentnode.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("deploy/grafana/agentnode.json: %v", err)
	}
	out := map[string][]string{}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, tg := range p.Targets {
			out[p.Title] = append(out[p.Title], metricName.FindAllString(tg.Expr, -1)...)
		}
	}
	if len(out) < 10 {
		t.Fatalf("the dashboard has %d panels", len(out))
	}
	return out
}

// family is the scraped family a queried name belongs to: itself, or the
// histogram whose _bucket, _sum or _count series it is.
func family(fams map[string]*dto.MetricFamily, name string) (*dto.MetricFamily, bool) {
	if f, ok := fams[name]; ok {
		return f, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if f, ok := fams[base]; ok && f.GetType() == dto.MetricType_HISTOGRAM {
				return f, true
			}
		}
	}
	return nil, false
}

// TestMetrics_GrafanaDashboard scrapes the real binary (with a peer, so
// that the peer figures are there) after some traffic: every metric the
// Grafana dashboard in deploy/grafana queries is served.
func TestMetrics_GrafanaDashboard(t *testing.T) {
	peer := startNode(t, nil)
	n := launchNode(t, launch{args: []string{"--peer", peer.url}, logLevel: "info"})
	traffic(t, n)
	fams := n.families(t)
	for panel, names := range dashboardMetrics(t) {
		for _, name := range names {
			if _, ok := family(fams, name); !ok {
				t.Errorf("panel %q queries %s, which /metrics does not serve", panel, name)
			}
		}
	}
}

// TestMetrics_Latencies: a publish, a REQ and an /acp call are observed in
// their histograms, and the build's version is on agentnode_build_info.
func TestMetrics_Latencies(t *testing.T) {
	n := startNode(t, nil)
	traffic(t, n)
	histograms := []struct {
		name   string
		labels map[string]string
	}{
		{"agentnode_relay_publish_seconds", map[string]string{"result": "accepted"}},
		{"agentnode_relay_req_eose_seconds", nil},
		{"agentnode_agent_call_seconds", map[string]string{"transport": "acp"}},
		{"agentnode_http_request_seconds", map[string]string{"route": "GET /healthz", "class": "2xx"}},
	}
	// a latency is observed when its hook runs, which may be just after
	// the client had its answer: scrape until each has one (10 s at most)
	var fams map[string]*dto.MetricFamily
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		fams = n.families(t)
		observed := true
		for _, c := range histograms {
			observed = observed && fams[c.name] != nil && histogramCount(fams[c.name], c.labels) >= 1
		}
		if observed || time.Now().After(deadline) {
			break
		}
	}
	for _, c := range histograms {
		f, ok := fams[c.name]
		if !ok {
			t.Errorf("no %s", c.name)
			continue
		}
		if got := histogramCount(f, c.labels); got < 1 {
			t.Errorf("%s%v observed %d times, want at least 1", c.name, c.labels, got)
		}
	}
	build := fams["agentnode_build_info"]
	if build == nil || len(build.GetMetric()) != 1 || !labelValues(build, "go_version")[runtime.Version()] {
		t.Errorf("agentnode_build_info: %v", build)
	}
	if got := labelValues(fams["agentnode_agents"], "state"); !got["installed"] || !got["running"] {
		t.Errorf("agentnode_agents states %v, want installed and running", got)
	}
}

// TestMetrics_RoutesBounded: a stranger asking for thousands of distinct
// paths does not grow the HTTP metrics' label set: routes are patterns,
// unknown paths are "unmatched", and no path a stranger chose appears.
func TestMetrics_RoutesBounded(t *testing.T) {
	n := startNode(t, nil)
	hc := http.Client{Timeout: 10 * time.Second}
	for i := range 500 {
		for _, p := range []string{fmt.Sprintf("/probe-%d", i), fmt.Sprintf("/api/verify/probe-%d", i), fmt.Sprintf("/agents/probe-%d", i)} {
			resp, err := hc.Get("http://" + n.addr + p)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	fams := n.families(t)
	routes := labelValues(fams["agentnode_http_requests_total"], "route")
	if !routes["unmatched"] || !routes["GET /api/verify/{agent}"] {
		t.Errorf("routes %v: want unmatched and GET /api/verify/{agent}", routes)
	}
	if len(routes) > 20 {
		t.Errorf("%d route labels after 1500 distinct paths: %v", len(routes), routes)
	}
	for r := range routes {
		if strings.Contains(r, "probe") {
			t.Errorf("a raw path is a label: %q", r)
		}
	}
	if codes := labelValues(fams["agentnode_http_requests_total"], "code"); len(codes) > 5 {
		t.Errorf("codes %v", codes)
	}
}

// TestMetrics_RefusedConnections: a websocket refused by the per-address
// limit is counted in agentnode_relay_refused_connections_total.
func TestMetrics_RefusedConnections(t *testing.T) {
	n := startNode(t, map[string]any{"max_connections_per_ip": 1})
	before := n.metric(t, "agentnode_relay_refused_connections_total")
	if _, code, _ := dialFrom(t, n, "127.0.0.9"); code != 0 { // an address the node's own clients never use
		t.Fatalf("the first connection was refused: %d", code)
	}
	if _, code, _ := dialFrom(t, n, "127.0.0.9"); code == 0 {
		t.Fatal("the second connection from one address was admitted")
	}
	if got := n.metric(t, "agentnode_relay_refused_connections_total") - before; got != 1 {
		t.Errorf("agentnode_relay_refused_connections_total moved by %v, want 1", got)
	}
	if _, ok := n.families(t)["agentnode_relay_shed_total"]; !ok {
		t.Error("no agentnode_relay_shed_total")
	}
}
