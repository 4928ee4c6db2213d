package directory

import (
	"context"
	"fmt"
	"math"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// Evaluate records a review of agent (ACP agentEvaluate): it builds the
// kind-1985 evaluation (score 0..10, review text, optional ref: an event id
// or a task/message id), signs it with evaluatorSK (nsec or hex), publishes
// it and applies it, and returns the signed event. The agent must be listed.
// How much it counts is the evaluator's trust (Config.Trust); a later review
// by the same evaluator replaces it.
func (d *Directory) Evaluate(ctx context.Context, evaluatorSK, agent string, score float64, review, ref string) (*nostr.Event, error) {
	evt, err := d.buildEvaluation(evaluatorSK, agent, score, review, ref)
	if err != nil {
		return nil, err
	}
	if d.cfg.Publisher == nil {
		return nil, ErrNoPublisher
	}
	if err := d.cfg.Publisher.Publish(ctx, evt); err != nil {
		return nil, fmt.Errorf("directory: publish evaluation: %w", err)
	}
	d.ingest(ctx, evt)
	return evt, nil
}

// buildEvaluation checks the arguments and returns the signed event.
func (d *Directory) buildEvaluation(evaluatorSK, agent string, score float64, review, ref string) (*nostr.Event, error) {
	sk, err := events.ParseSecretKey(evaluatorSK)
	if err != nil {
		return nil, fmt.Errorf("directory: %w: evaluator key: %w", ErrBadEvaluation, err)
	}
	hex, err := events.ParsePubKey(agent)
	if err != nil {
		return nil, fmt.Errorf("directory: %w: agent: %w", ErrBadEvaluation, err)
	}
	if math.IsNaN(score) || score < 0 || score > events.MaxScore {
		return nil, fmt.Errorf("directory: %w: score %v is not in 0..10", ErrBadEvaluation, score)
	}
	if !d.has(hex) {
		return nil, fmt.Errorf("directory: evaluate %s: %w", hex, ErrUnknownAgent)
	}
	ev := &events.Evaluation{Agent: hex, Score: score, Review: review, Ref: ref}
	evt := ev.Template()
	evt.CreatedAt = nostr.Timestamp(d.cfg.Now().Unix())
	if err := evt.Sign(sk); err != nil {
		return nil, fmt.Errorf("directory: sign evaluation: %w", err)
	}
	if err := events.ValidateEvaluation(&evt); err != nil {
		return nil, fmt.Errorf("directory: %w: %w", ErrBadEvaluation, err)
	}
	return &evt, nil
}
