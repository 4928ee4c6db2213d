package events_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/nbd-wtf/go-nostr"
)

func TestValidateHeartbeat_Refusals(t *testing.T) {
	pk := hexID(7)
	hb := func(content string, tags ...nostr.Tag) *nostr.Event {
		e := event(events.KindHeartbeat, content, tags...)
		e.PubKey = pk
		return e
	}
	d, active := nostr.Tag{"d", pk}, nostr.Tag{"status", "active"}
	tests := []refusal{
		{"empty tag name", hb("", d, active, nostr.Tag{}),
			events.ErrBadTag, `kind 30333: tag "": empty tag name`},
		{"no d", hb("", active),
			events.ErrMissingTag, `kind 30333: tag "d": required tag missing`},
		{"d not a pubkey", hb("", nostr.Tag{"d", "agent-1"}, active),
			events.ErrBadPubKey, `kind 30333: tag "d": not a 64-hex pubkey`},
		{"d another key", hb("", nostr.Tag{"d", hexID(8)}, active),
			events.ErrBadPubKey, `kind 30333: tag "d": d must be the signing agent's pubkey`},
		{"no status", hb("", d),
			events.ErrMissingTag, `kind 30333: tag "status": required tag missing`},
		{"unknown status", hb("", d, nostr.Tag{"status", "sleeping"}),
			events.ErrBadValue, `kind 30333: tag "status": must be "active", "busy" or "offline"`},
		{"negative capacity", hb("", d, active, nostr.Tag{"capacity", "-1"}),
			events.ErrBadValue, `kind 30333: tag "capacity": not a non-negative integer`},
		{"load not a number", hb("", d, active, nostr.Tag{"load", "two"}),
			events.ErrBadValue, `kind 30333: tag "load": not a non-negative integer`},
		{"empty capability", hb("", d, active, nostr.Tag{"capability", " "}),
			events.ErrBadValue, `kind 30333: tag "capability": empty value`},
		{"k not a kind", hb("", d, active, nostr.Tag{"k", "dm"}),
			events.ErrBadValue, `kind 30333: tag "k": not a kind number`},
		{"expiration not a time", hb("", d, active, nostr.Tag{"expiration", "soon"}),
			events.ErrBadValue, `kind 30333: tag "expiration": not a unix timestamp`},
		{"content not an object", hb("[1]", d, active),
			events.ErrBadContent, `kind 30333: content: not an ACP agent object`},
		{"content with a bad field type", hb(`{"name":3}`, d, active),
			events.ErrBadContent, `kind 30333: content: not an ACP agent object`},
	}
	checkRefusals(t, events.ValidateHeartbeat, tests)
	for _, tt := range tests {
		if _, perr := events.ParseHeartbeat(tt.evt); perr == nil || perr.Error() != tt.wantMsg {
			t.Errorf("%s: ParseHeartbeat = %v, want %s", tt.name, perr, tt.wantMsg)
		}
	}
}

func TestHeartbeat_RoundTrip(t *testing.T) {
	kp := testkit.NewKey(t)
	sk, pk := kp.SK, kp.PK
	in := &events.Heartbeat{
		Agent: pk, Status: events.StatusBusy, Capacity: 4, Load: 3,
		Capabilities: []string{"web.search", "code.review", "web.search"},
		Kinds:        []int{1059, 25910}, Expiration: testTime + 90,
		Card: &events.AgentCard{Name: "Reviewer",
			Capabilities: &events.CardCapabilities{Models: []string{"llama3"}, Specializations: []string{"go"}},
			CostMetrics:  &events.CostMetrics{CostPerToken: 0.0005}},
	}
	evt := signed(t, sk, in.Template())
	if err := events.ValidateHeartbeat(evt); err != nil {
		t.Fatalf("own template refused: %v", err)
	}
	got, err := events.ParseHeartbeat(evt)
	if err != nil {
		t.Fatal(err)
	}
	if got.Agent != pk || got.PubKey != pk || got.Status != "busy" || got.Capacity != 4 || got.Load != 3 {
		t.Errorf("got %+v", got)
	}
	if want := []string{"code.review", "web.search"}; !slices.Equal(got.Capabilities, want) {
		t.Errorf("capabilities = %v, want %v", got.Capabilities, want)
	}
	if !slices.Equal(got.Kinds, []int{1059, 25910}) || got.Expiration != testTime+90 {
		t.Errorf("kinds %v expiration %d", got.Kinds, got.Expiration)
	}
	if got.Card == nil || got.Card.Name != "Reviewer" || got.Card.CostMetrics.CostPerToken != 0.0005 ||
		!slices.Equal(got.Card.Capabilities.Models, []string{"llama3"}) {
		t.Errorf("card = %+v", got.Card)
	}
}

func TestParseHeartbeat_MinimalAndWrongKind(t *testing.T) {
	kp := testkit.NewKey(t)
	sk, pk := kp.SK, kp.PK
	evt := signed(t, sk, nostr.Event{Kind: events.KindHeartbeat, Tags: nostr.Tags{{"d", pk}, {"status", "offline"}}})
	got, err := events.ParseHeartbeat(evt)
	if err != nil {
		t.Fatal(err)
	}
	if got.Card != nil || got.Capacity != 0 || got.Expiration != 0 || got.Status != events.StatusOffline {
		t.Errorf("got %+v", got)
	}
	evt.Kind = 30334
	if _, err := events.ParseHeartbeat(evt); !errors.Is(err, events.ErrWrongKind) {
		t.Errorf("wrong kind: %v", err)
	}
	if _, err := events.ParseHeartbeat(nil); err != events.ErrNilEvent {
		t.Errorf("nil: %v", err)
	}
}

// The relay's policy (events.Validate) checks heartbeats and agentnode
// evaluations; other labels pass untouched.
func TestValidate_HeartbeatAndEvaluationKinds(t *testing.T) {
	bad := &nostr.Event{Kind: events.KindHeartbeat, Tags: nostr.Tags{{"status", "active"}}} // no d
	if err := events.Validate(bad); err == nil {
		t.Fatal("events.Validate accepted a heartbeat without d")
	}
	eval := &nostr.Event{Kind: events.KindLabel, Tags: nostr.Tags{{"L", events.EvalNamespace}}} // no l, no p
	if err := events.Validate(eval); err == nil {
		t.Fatal("events.Validate accepted an evaluation without score or agent")
	}
	other := &nostr.Event{Kind: events.KindLabel, Tags: nostr.Tags{{"L", "ugc"}, {"l", "spam", "ugc"}}}
	if err := events.Validate(other); err != nil {
		t.Fatalf("events.Validate refused another namespace's label: %v", err)
	}
}
