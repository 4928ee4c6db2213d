package events_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// FuzzParseHeartbeat: no input panics, and whatever parses survives a
// Template round trip with the same meaning.
func FuzzParseHeartbeat(f *testing.F) {
	pk := hexID(0xa9e7)
	for _, s := range []struct {
		tags    nostr.Tags
		content string
	}{
		{nostr.Tags{{"d", pk}, {"status", "active"}, {"capacity", "4"}, {"load", "1"}, {"capability", "code.review"},
			{"k", "25910"}, {"expiration", "1739400090"}}, `{"name":"Reviewer","capabilities":{"tools":["git"]},"costMetrics":{"costPerToken":0.0005}}`},
		{nostr.Tags{{"d", pk}, {"status", "offline"}}, ""},
		{nostr.Tags{{"d", pk}, {"status", "busy"}, {"load", "+1"}}, `{"metrics":{"p50":12}}`},
		{nostr.Tags{{"d", "x"}, {"status", "asleep"}}, `[1]`},
	} {
		tags, _ := json.Marshal(s.tags)
		f.Add(string(tags), s.content)
	}
	f.Fuzz(func(t *testing.T, tagsJSON, content string) {
		var tags nostr.Tags
		if json.Unmarshal([]byte(tagsJSON), &tags) != nil {
			return
		}
		evt := &nostr.Event{Kind: events.KindHeartbeat, PubKey: pk, Tags: tags, Content: content, CreatedAt: testTime}
		h, err := events.ParseHeartbeat(evt)
		if err != nil {
			return
		}
		again := h.Template()
		again.PubKey, again.CreatedAt = pk, testTime
		h2, err := events.ParseHeartbeat(&again)
		if err != nil {
			t.Fatalf("own template refused: %v\n%v", err, again.Tags)
		}
		slices.Sort(h.Capabilities)
		if h2.Agent != h.Agent || h2.Status != h.Status || h2.Capacity != h.Capacity || h2.Load != h.Load ||
			!slices.Equal(h2.Capabilities, h.Capabilities) || !slices.Equal(h2.Kinds, h.Kinds) || h2.Expiration != h.Expiration {
			t.Fatalf("round trip changed it:\n%+v\n%+v", h, h2)
		}
	})
}

// FuzzParseEvaluation: no input panics; whatever parses round-trips.
func FuzzParseEvaluation(f *testing.F) {
	evaluator, agent := hexID(1), hexID(2)
	for _, tags := range []nostr.Tags{
		{{"L", "agentnode/eval"}, {"l", "8.5", "agentnode/eval"}, {"p", agent}, {"e", hexID(3)}},
		{{"L", "agentnode/eval"}, {"l", "10", "agentnode/eval"}, {"p", agent}, {"ref", "task-001"}},
		{{"L", "agentnode/eval"}, {"l", "1e1", "agentnode/eval"}, {"p", evaluator}},
	} {
		b, _ := json.Marshal(tags)
		f.Add(string(b), "review")
	}
	f.Fuzz(func(t *testing.T, tagsJSON, content string) {
		var tags nostr.Tags
		if json.Unmarshal([]byte(tagsJSON), &tags) != nil {
			return
		}
		evt := &nostr.Event{Kind: events.KindLabel, PubKey: evaluator, Tags: tags, Content: content, CreatedAt: testTime}
		ev, err := events.ParseEvaluation(evt)
		if err != nil {
			return
		}
		if ev.Score < 0 || ev.Score > 10 {
			t.Fatalf("score %v accepted", ev.Score)
		}
		again := ev.Template()
		again.PubKey = evaluator
		ev2, err := events.ParseEvaluation(&again)
		if err != nil {
			t.Fatalf("own template refused: %v", err)
		}
		if ev2.Agent != ev.Agent || ev2.Ref != ev.Ref || ev2.Review != ev.Review || events.FormatScore(ev2.Score) != events.FormatScore(ev.Score) {
			t.Fatalf("round trip changed it:\n%+v\n%+v", ev, ev2)
		}
	})
}
