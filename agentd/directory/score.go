package directory

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agentnode/agentnode/events"
)

// DefaultTrust is the trust used when Config.Trust is nil: 1 for the agent's
// verified owner and for keys on the allowlist, UntrustedWeight for anyone
// else. It reads the index unlocked: call it only where the directory calls
// a TrustFunc (with its lock held), e.g. as the fallback of a custom one.
func (d *Directory) DefaultTrust(evaluator, agent string) float64 {
	if d.allow[evaluator] {
		return 1
	}
	if e := d.agents[agent]; e != nil && e.view.OwnerVerified && e.view.Owner == evaluator {
		return 1
	}
	return UntrustedWeight
}

// weight is the clamped trust of evaluator for agent.
func (d *Directory) weight(evaluator, agent string) float64 {
	w := d.cfg.Trust(evaluator, agent)
	switch {
	case math.IsNaN(w) || w <= 0:
		return 0
	case w > 1:
		return 1
	}
	return w
}

// rescore recomputes e's trust-weighted quality score: the weighted mean of
// each evaluator's latest score, weights from Trust; evaluators of weight 0
// do not count. No counted review: score 0, count 0.
func (d *Directory) rescore(e *entry) {
	var sum, weights float64
	n := 0
	for evaluator, ev := range d.reviews[e.id] {
		w := d.weight(evaluator, e.id)
		if w == 0 {
			continue
		}
		sum += w * ev.Score
		weights += w
		n++
	}
	e.view.QualityScore, e.view.EvaluationCount = 0, n
	if weights > 0 {
		e.view.QualityScore = math.Round(sum/weights*100) / 100
	}
}

// Rescore recomputes every agent's score: call it when a custom Trust
// function's answers change (the directory rescores by itself when reviews
// or owner links change).
func (d *Directory) Rescore() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range d.agents {
		d.rescore(e)
	}
}

// Review is one counted evaluation, as Metrics shows it.
type Review struct {
	Evaluator string    `json:"evaluator"`
	Score     float64   `json:"score"`
	Weight    float64   `json:"weight"` // the evaluator's trust, 0..1
	Text      string    `json:"text,omitempty"`
	Ref       string    `json:"ref,omitempty"`
	At        time.Time `json:"at"`
	EventID   string    `json:"eventId"`
}

// Metrics is the ACP metric resource of one agent (agent://metrics/{id}).
type Metrics struct {
	Agent           string    `json:"agentId"`
	QualityScore    float64   `json:"qualityScore"`
	EvaluationCount int       `json:"evaluationCount"`
	LastEvaluated   time.Time `json:"lastEvaluated,omitzero"`
	Reviews         []Review  `json:"reviews"` // latest per evaluator, newest first (weight 0 included)

	Available      bool      `json:"available"`
	Status         string    `json:"status,omitempty"`
	Load           int       `json:"load"`
	Capacity       int       `json:"capacity"`
	LastHeartbeat  time.Time `json:"lastHeartbeat,omitzero"`
	HeartbeatsSeen int       `json:"heartbeatsSeen"`

	CostPerToken         float64 `json:"costPerToken"`
	AverageSpeed         float64 `json:"averageSpeed,omitempty"`
	AverageExecutionTime float64 `json:"averageExecutionTime,omitempty"`
}

// Metrics returns the metrics of the agent with hex pubkey (or npub) id.
func (d *Directory) Metrics(id string) (Metrics, bool) {
	hex, err := events.ParsePubKey(id)
	if err != nil {
		return Metrics{}, false
	}
	now := d.cfg.Now()
	d.mu.RLock()
	defer d.mu.RUnlock()
	e := d.agents[hex]
	if e == nil || !e.known() {
		return Metrics{}, false
	}
	a := e.snapshot(now, d.cfg.HeartbeatTTL)
	m := Metrics{Agent: hex, QualityScore: a.QualityScore, EvaluationCount: a.EvaluationCount,
		Available: a.Available, Status: a.Status, Load: a.Load, Capacity: a.Capacity,
		LastHeartbeat: a.LastHeartbeat, HeartbeatsSeen: e.beats, CostPerToken: a.CostPerToken}
	if c := e.card; c != nil && c.CostMetrics != nil {
		m.AverageSpeed, m.AverageExecutionTime = c.CostMetrics.AverageSpeed, c.CostMetrics.AverageExecutionTime
	}
	m.Reviews = d.reviewList(hex)
	if len(m.Reviews) > 0 {
		m.LastEvaluated = m.Reviews[0].At
	}
	return m, true
}

// reviewList is the agent's latest review per evaluator, newest first.
func (d *Directory) reviewList(agent string) []Review {
	out := []Review{}
	for evaluator, ev := range d.reviews[agent] {
		out = append(out, Review{Evaluator: evaluator, Score: ev.Score, Weight: d.weight(evaluator, agent),
			Text: ev.Review, Ref: ev.Ref, At: ev.CreatedAt.Time(), EventID: ev.ID})
	}
	slices.SortFunc(out, func(a, b Review) int {
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return strings.Compare(a.EventID, b.EventID)
	})
	return out
}
