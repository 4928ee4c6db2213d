package events

import (
	"math"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// KindLabel is a NIP-32 label. agentnode's agent evaluations are labels in
// the EvalNamespace namespace.
const KindLabel = 1985

// EvalNamespace is the NIP-32 namespace ("L") of agent evaluations.
const EvalNamespace = "agentnode/eval"

// MaxScore is the top of the evaluation scale (0..MaxScore).
const MaxScore = 10.0

// Evaluation refusal reasons (documented in docs/KINDS.md).
const (
	reasonScore      = "score must be a number from 0 to 10"
	reasonOneScore   = "more than one score"
	reasonOneAgent   = "more than one evaluated agent"
	reasonSelfReview = "an agent cannot evaluate itself"
	reasonOneRef     = "more than one reference"
)

// Evaluation is a signed review of an agent: a kind-1985 label
// ["L","agentnode/eval"], ["l",<score>,"agentnode/eval"], ["p",<agent>],
// optional ["e",<event id>] or ["ref",<task id>]; content = review text.
type Evaluation struct {
	ID        string
	Evaluator string // PubKey: who reviews
	CreatedAt nostr.Timestamp

	Agent  string  // "p": the agent reviewed
	Score  float64 // 0..MaxScore
	Ref    string  // "e" (event id) or "ref" (any other task/message id), may be ""
	Review string  // content
}

// IsEvaluation reports whether evt is a kind-1985 label in EvalNamespace
// (an "L" or an "l" naming it); other labels are not agentnode's business.
func IsEvaluation(evt *nostr.Event) bool {
	if evt == nil || evt.Kind != KindLabel {
		return false
	}
	for _, t := range evt.Tags {
		if (isTag(t, "L") && tagAt(t, 1) == EvalNamespace) || (isTag(t, "l") && tagAt(t, 2) == EvalNamespace) {
			return true
		}
	}
	return false
}

// ValidateEvaluation checks the rules of a kind-1985 agentnode evaluation
// (docs/KINDS.md) and returns nil or a *ValidationError, like Validate.
func ValidateEvaluation(evt *nostr.Event) error {
	if evt == nil {
		return ErrNilEvent
	}
	return validateEvaluation(evt)
}

// validateEvaluation holds the kind-1985 evaluation rules, in order.
var validateEvaluation = all(
	checkTagNames,
	checkEvalNamespace,
	checkScore,
	checkEvaluatedAgent,
	checkEvalRef,
)

// checkEvalNamespace: ["L", "agentnode/eval"] is present.
func checkEvalNamespace(evt *nostr.Event) error {
	for _, t := range evt.Tags {
		if isTag(t, "L") && tagAt(t, 1) == EvalNamespace {
			return nil
		}
	}
	return invalid(evt.Kind, "L", ErrMissingTag)
}

// checkScore: exactly one "l" in the namespace, a number in 0..10.
func checkScore(evt *nostr.Event) error {
	scores := evalScores(evt.Tags)
	switch {
	case len(scores) == 0:
		return invalid(evt.Kind, "l", ErrMissingTag)
	case len(scores) > 1:
		return invalidBecause(evt.Kind, "l", ErrBadTag, reasonOneScore)
	}
	if _, ok := ParseScore(scores[0]); !ok {
		return invalidBecause(evt.Kind, "l", ErrBadValue, reasonScore)
	}
	return nil
}

// evalScores returns the values of the "l" tags in EvalNamespace.
func evalScores(tags nostr.Tags) []string {
	var out []string
	for _, t := range tags {
		if isTag(t, "l") && tagAt(t, 2) == EvalNamespace {
			out = append(out, tagAt(t, 1))
		}
	}
	return out
}

// ParseScore parses a decimal score in 0..MaxScore ("8", "7.5"); no sign,
// exponent, NaN or infinity.
func ParseScore(s string) (float64, bool) {
	if s == "" || strings.Trim(s, "0123456789.") != "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsNaN(f) && f >= 0 && f <= MaxScore
}

// checkEvaluatedAgent: exactly one "p", a 64-hex pubkey other than the signer.
func checkEvaluatedAgent(evt *nostr.Event) error {
	switch n := countTags(evt.Tags, "p"); {
	case n == 0:
		return invalid(evt.Kind, "p", ErrMissingTag)
	case n > 1:
		return invalidBecause(evt.Kind, "p", ErrBadTag, reasonOneAgent)
	}
	agent := valueOf(evt.Tags, "p")
	if !IsHex64(agent) {
		return invalid(evt.Kind, "p", ErrBadPubKey)
	}
	if agent == evt.PubKey {
		return invalidBecause(evt.Kind, "p", ErrBadPubKey, reasonSelfReview)
	}
	return nil
}

// checkEvalRef: at most one "e" (64-hex) or "ref" (non-empty).
func checkEvalRef(evt *nostr.Event) error {
	if countTags(evt.Tags, "e")+countTags(evt.Tags, "ref") > 1 {
		return invalidBecause(evt.Kind, "e", ErrBadTag, reasonOneRef)
	}
	if v, ok := firstValue(evt.Tags, "e"); ok && !IsHex64(v) {
		return invalid(evt.Kind, "e", ErrBadID)
	}
	if v, ok := firstValue(evt.Tags, "ref"); ok && blank(v) {
		return invalidBecause(evt.Kind, "ref", ErrBadValue, reasonEmptyValue)
	}
	return nil
}

// ParseEvaluation validates a kind-1985 agentnode evaluation and returns its
// typed view.
func ParseEvaluation(evt *nostr.Event) (*Evaluation, error) {
	if evt == nil {
		return nil, ErrNilEvent
	}
	if evt.Kind != KindLabel {
		return nil, invalidBecause(evt.Kind, "kind", ErrWrongKind, "want "+strconv.Itoa(KindLabel))
	}
	if err := validateEvaluation(evt); err != nil {
		return nil, err
	}
	score, _ := ParseScore(evalScores(evt.Tags)[0])
	ref := valueOf(evt.Tags, "e")
	if ref == "" {
		ref = valueOf(evt.Tags, "ref")
	}
	return &Evaluation{
		ID: evt.ID, Evaluator: evt.PubKey, CreatedAt: evt.CreatedAt,
		Agent: valueOf(evt.Tags, "p"), Score: score, Ref: ref, Review: evt.Content,
	}, nil
}

// Template returns the unsigned kind-1985 event for e: L, l (score with at
// most two decimals), p, then e (a 64-hex Ref) or ref (any other Ref), and
// alt. CreatedAt is left to the caller; the evaluator signs.
func (e *Evaluation) Template() nostr.Event {
	tags := nostr.Tags{
		{"L", EvalNamespace},
		{"l", FormatScore(e.Score), EvalNamespace},
		{"p", e.Agent},
	}
	switch {
	case IsHex64(e.Ref):
		tags = append(tags, nostr.Tag{"e", e.Ref})
	case e.Ref != "":
		tags = append(tags, nostr.Tag{"ref", e.Ref})
	}
	tags = append(tags, nostr.Tag{"alt", "agent evaluation: " + FormatScore(e.Score) + "/10"})
	return nostr.Event{Kind: KindLabel, Tags: tags, Content: e.Review}
}

// FormatScore renders a score as a plain decimal with at most two decimals.
func FormatScore(f float64) string {
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
}

// Supersedes reports whether e replaces other as its evaluator's review of
// the same agent: the later created_at wins, on a tie the lower id.
func (e *Evaluation) Supersedes(other *Evaluation) bool {
	return e.CreatedAt > other.CreatedAt || (e.CreatedAt == other.CreatedAt && e.ID < other.ID)
}
