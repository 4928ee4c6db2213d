package events_test

import (
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/nbd-wtf/go-nostr"
)

func TestValidateEvaluation_Refusals(t *testing.T) {
	evaluator, agent := hexID(1), hexID(2)
	ev := func(tags ...nostr.Tag) *nostr.Event {
		e := event(events.KindLabel, "good", tags...)
		e.PubKey = evaluator
		return e
	}
	L := nostr.Tag{"L", "agentnode/eval"}
	l := func(s string) nostr.Tag { return nostr.Tag{"l", s, "agentnode/eval"} }
	p := nostr.Tag{"p", agent}
	tests := []refusal{
		{"empty tag name", ev(L, l("8"), p, nostr.Tag{""}),
			events.ErrBadTag, `kind 1985: tag "": empty tag name`},
		{"no namespace", ev(l("8"), p),
			events.ErrMissingTag, `kind 1985: tag "L": required tag missing`},
		{"no score", ev(L, nostr.Tag{"l", "8", "other"}, p),
			events.ErrMissingTag, `kind 1985: tag "l": required tag missing`},
		{"two scores", ev(L, l("8"), l("9"), p),
			events.ErrBadTag, `kind 1985: tag "l": more than one score`},
		{"score above 10", ev(L, l("10.5"), p),
			events.ErrBadValue, `kind 1985: tag "l": score must be a number from 0 to 10`},
		{"negative score", ev(L, l("-1"), p),
			events.ErrBadValue, `kind 1985: tag "l": score must be a number from 0 to 10`},
		{"score words", ev(L, l("good"), p),
			events.ErrBadValue, `kind 1985: tag "l": score must be a number from 0 to 10`},
		{"score exponent", ev(L, l("1e1"), p),
			events.ErrBadValue, `kind 1985: tag "l": score must be a number from 0 to 10`},
		{"no agent", ev(L, l("8")),
			events.ErrMissingTag, `kind 1985: tag "p": required tag missing`},
		{"two agents", ev(L, l("8"), p, nostr.Tag{"p", hexID(3)}),
			events.ErrBadTag, `kind 1985: tag "p": more than one evaluated agent`},
		{"agent not a pubkey", ev(L, l("8"), nostr.Tag{"p", "npub1abc"}),
			events.ErrBadPubKey, `kind 1985: tag "p": not a 64-hex pubkey`},
		{"self review", ev(L, l("8"), nostr.Tag{"p", evaluator}),
			events.ErrBadPubKey, `kind 1985: tag "p": an agent cannot evaluate itself`},
		{"two refs", ev(L, l("8"), p, nostr.Tag{"e", hexID(4)}, nostr.Tag{"ref", "task-1"}),
			events.ErrBadTag, `kind 1985: tag "e": more than one reference`},
		{"e not an id", ev(L, l("8"), p, nostr.Tag{"e", "task-1"}),
			events.ErrBadID, `kind 1985: tag "e": not a 64-hex event id`},
		{"empty ref", ev(L, l("8"), p, nostr.Tag{"ref", ""}),
			events.ErrBadValue, `kind 1985: tag "ref": empty value`},
	}
	checkRefusals(t, events.ValidateEvaluation, tests)
}

func TestEvaluation_RoundTrip(t *testing.T) {
	sk := testkit.NewKey(t).SK
	agent := testkit.NewKey(t).PK
	for _, ref := range []string{"", hexID(9), "task-001"} {
		in := &events.Evaluation{Agent: agent, Score: 7.456, Ref: ref, Review: "Fast and accurate"}
		evt := signed(t, sk, in.Template())
		if !events.IsEvaluation(evt) {
			t.Fatal("own template is not an evaluation")
		}
		got, err := events.ParseEvaluation(evt)
		if err != nil {
			t.Fatalf("ref %q: %v", ref, err)
		}
		if got.Agent != agent || got.Score != 7.46 || got.Ref != ref || got.Review != "Fast and accurate" || got.Evaluator != evt.PubKey {
			t.Errorf("ref %q: got %+v", ref, got)
		}
	}
}

func TestIsEvaluation(t *testing.T) {
	other := event(events.KindLabel, "", nostr.Tag{"L", "ISO-639-1"}, nostr.Tag{"l", "en", "ISO-639-1"})
	if events.IsEvaluation(other) {
		t.Error("a foreign label counts as an evaluation")
	}
	if events.IsEvaluation(event(1, "", nostr.Tag{"L", "agentnode/eval"})) {
		t.Error("kind 1 counts as an evaluation")
	}
	if !events.IsEvaluation(event(events.KindLabel, "", nostr.Tag{"l", "5", "agentnode/eval"})) {
		t.Error("an l in the namespace without L is not recognised (it must be, to be refused)")
	}
}

func TestEvaluation_Supersedes(t *testing.T) {
	a := &events.Evaluation{ID: hexID(2), CreatedAt: 10}
	b := &events.Evaluation{ID: hexID(1), CreatedAt: 10}
	c := &events.Evaluation{ID: hexID(3), CreatedAt: 11}
	if !c.Supersedes(a) || a.Supersedes(c) || !b.Supersedes(a) || a.Supersedes(b) {
		t.Error("latest created_at, then lower id, must win")
	}
}
