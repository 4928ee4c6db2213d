package directory_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

// spec is one agent of a search scenario.
type spec struct {
	name     string
	caps     []string
	cost     float64
	score    float64 // one review by a stranger; < 0: none
	load     int
	capacity int
	status   string
}

// population publishes the agents (heartbeat with an agent object, then a
// review) and waits until the directory has them all; it returns their keys.
func population(t *testing.T, env testEnv, d *directory.Directory, specs []spec) []key {
	t.Helper()
	reviewer := testkit.NewKey(t)
	keys := make([]key, len(specs))
	for i, s := range specs {
		keys[i] = testkit.NewKey(t)
		c := &events.AgentCard{Name: s.name, CostMetrics: &events.CostMetrics{CostPerToken: s.cost}}
		beat(t, env.rel, keys[i], env.clk.Now(), directory.Status{Status: s.status, Capabilities: s.caps,
			Load: s.load, Capacity: s.capacity, Card: c})
	}
	for i, s := range specs {
		agentWhere(t, d, keys[i].PK, s.name, func(directory.Agent) bool { return true })
		if s.score >= 0 {
			if _, err := d.Evaluate(context.Background(), reviewer.SK, keys[i].PK, s.score, "", ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	return keys
}

// names returns the agents' names in order.
func names(agents []directory.Agent) []string {
	out := make([]string, len(agents))
	for i, a := range agents {
		out[i] = a.Name
	}
	return out
}

func TestSearch_FiltersAndRanking(t *testing.T) {
	env := newEnv(t)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	both := []string{"data-analysis", "visualization"}
	population(t, env, d, []spec{
		{name: "DataViz Pro", caps: both, cost: 0.0008, score: 9, capacity: 4},
		{name: "AnalyticsEngine", caps: both, cost: 0.00095, score: 9, capacity: 4},
		{name: "StatisticsHelper", caps: []string{"data-analysis"}, cost: 0.0005, score: 7.9, capacity: 4},
		{name: "Cheap But Busy", caps: both, cost: 0.0002, score: 5, load: 4, capacity: 4},
		{name: "Unrated Painter", caps: []string{"Visualization"}, score: -1},
	})
	tests := []struct {
		name string
		q    directory.Query
		want []string
	}{
		// rank = 0.6·score/10 + 0.2·(1 − cost/0.00095) + 0.2·(1 − load/capacity):
		// DataViz 0.772, AnalyticsEngine 0.740, Cheap But Busy 0.458.
		{"both capabilities", directory.Query{Capabilities: both}, []string{"DataViz Pro", "AnalyticsEngine", "Cheap But Busy"}},
		{"capability names ignore case", directory.Query{Capabilities: []string{"VISUALIZATION"}},
			[]string{"DataViz Pro", "AnalyticsEngine", "Cheap But Busy", "Unrated Painter"}}, // 0.458 > 0.4
		{"minScore", directory.Query{Capabilities: both, MinScore: 7.5}, []string{"DataViz Pro", "AnalyticsEngine"}},
		{"maxCost", directory.Query{Capabilities: both, MaxCost: ptr(0.0009)}, []string{"DataViz Pro", "Cheap But Busy"}},
		{"maxCost 0 keeps the free", directory.Query{MaxCost: ptr(0.0)}, []string{"Unrated Painter"}},
		{"all three filters", directory.Query{Capabilities: []string{"data-analysis"}, MinScore: 7, MaxCost: ptr(0.0006)}, []string{"StatisticsHelper"}},
		{"text", directory.Query{Text: "  engine "}, []string{"AnalyticsEngine"}},
		{"limit", directory.Query{Capabilities: both, Limit: 1}, []string{"DataViz Pro"}},
		{"unknown capability", directory.Query{Capabilities: []string{"data-analysis", "cooking"}}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(d.Search(tt.q)); !slices.Equal(got, tt.want) {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestSearch_MatchesTheDocumentedFormula checks Search against an oracle
// that applies docs/DIRECTORY.md's filters and formula to the inputs.
func TestSearch_MatchesTheDocumentedFormula(t *testing.T) {
	env := newEnv(t)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := []string{"a", "b", "c", "d"}
	specs := make([]spec, 40)
	for i := range specs {
		s := spec{name: fmt.Sprintf("agent-%02d", i), cost: float64(rng.IntN(5)) / 1000, score: float64(rng.IntN(12)) - 1,
			capacity: rng.IntN(4), load: rng.IntN(4), status: []string{"active", "active", "busy"}[rng.IntN(3)]}
		for _, c := range vocab {
			if rng.IntN(2) == 0 {
				s.caps = append(s.caps, c)
			}
		}
		s.score = min(s.score, 10)
		specs[i] = s
	}
	keys := population(t, env, d, specs)
	for i := range 50 {
		q := directory.Query{MinScore: float64(rng.IntN(8)), Limit: -1}
		if rng.IntN(2) == 0 {
			q.MaxCost = ptr(float64(rng.IntN(5)) / 1000)
		}
		q.Capabilities = vocab[:rng.IntN(3)]
		got, want := names(d.Search(q)), oracle(specs, keys, q)
		if !slices.Equal(got, want) {
			t.Errorf("query %d %+v:\n got %v\nwant %v", i, q, got, want)
		}
	}
}

// oracle filters and ranks specs as docs/DIRECTORY.md says.
func oracle(specs []spec, keys []key, q directory.Query) []string {
	type ranked struct {
		name, id string
		rank     float64
		reviews  int
	}
	var hits []spec
	id := map[string]string{}
	maxCost := 0.0
	for i, s := range specs {
		id[s.name] = keys[i].PK
		score := max(s.score, 0)
		if score < q.MinScore || (q.MaxCost != nil && s.cost > *q.MaxCost) {
			continue
		}
		if !containsAll(s.caps, q.Capabilities) {
			continue
		}
		hits = append(hits, s)
		maxCost = max(maxCost, s.cost)
	}
	var rs []ranked
	for _, s := range hits {
		costTerm := 1.0
		if maxCost > 0 {
			costTerm = 1 - s.cost/maxCost
		}
		loadFrac := 0.0
		switch {
		case s.status == "busy":
			loadFrac = 1
		case s.capacity > 0:
			loadFrac = min(1, float64(s.load)/float64(s.capacity))
		case s.load > 0:
			loadFrac = 1
		}
		r := ranked{name: s.name, id: id[s.name], rank: 0.6*max(s.score, 0)/10 + 0.2*costTerm + 0.2*(1-loadFrac)}
		if s.score >= 0 {
			r.reviews = 1
		}
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(b.rank, a.rank), cmp.Compare(b.reviews, a.reviews), strings.Compare(a.id, b.id))
	})
	out := []string{}
	for _, r := range rs {
		out = append(out, r.name)
	}
	return out
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, w) }) {
			return false
		}
	}
	return true
}
