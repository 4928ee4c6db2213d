package events_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/nbd-wtf/go-nostr"
)

func TestOwnerClaims_RoundTrip(t *testing.T) {
	kp := testkit.NewKey(t)
	sk, pk := kp.SK, kp.PK
	tests := []struct {
		name   string
		claims events.OwnerClaims
	}{
		{"agents", events.OwnerClaims{Agents: []string{hexID(1), hexID(2)}}},
		{"agents and other tags", events.OwnerClaims{Agents: []string{hexID(1)}, Content: "my bots",
			Extra: nostr.Tags{{"alt", "owner claims"}, {"client", "agentnode"}}}},
		{"none", events.OwnerClaims{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evt := signed(t, sk, tt.claims.Template())
			got, err := events.ParseOwnerClaims(evt)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.claims
			want.ID, want.PubKey, want.CreatedAt = evt.ID, pk, testTime
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

func TestParseOwnerClaims_DedupesAndKeepsOrder(t *testing.T) {
	evt := event(14199, "", nostr.Tag{"p", hexID(2)}, nostr.Tag{"alt", "x"}, nostr.Tag{"p", hexID(1)}, nostr.Tag{"p", hexID(2), "wss://r"})
	got, err := events.ParseOwnerClaims(evt)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{hexID(2), hexID(1)}; !reflect.DeepEqual(got.Agents, want) {
		t.Errorf("Agents = %v, want %v", got.Agents, want)
	}
	if want := (nostr.Tags{{"alt", "x"}}); !reflect.DeepEqual(got.Extra, want) {
		t.Errorf("Extra = %v, want %v", got.Extra, want)
	}
}

func TestMergeClaims(t *testing.T) {
	known, unknown, added := hexID(1), hexID(99), hexID(3)
	latest := &events.OwnerClaims{ID: hexID(50), PubKey: hexID(60), CreatedAt: 5,
		Agents: []string{unknown, known}, Content: "c", Extra: nostr.Tags{{"alt", "owner claims"}}}
	tests := []struct {
		name        string
		latest      *events.OwnerClaims
		add, remove []string
		want        *events.OwnerClaims
	}{
		{"add keeps unknown p tags and other tags", latest, []string{added, known}, nil,
			&events.OwnerClaims{PubKey: hexID(60), Agents: []string{unknown, known, added}, Content: "c", Extra: nostr.Tags{{"alt", "owner claims"}}}},
		{"remove", latest, nil, []string{known},
			&events.OwnerClaims{PubKey: hexID(60), Agents: []string{unknown}, Content: "c", Extra: nostr.Tags{{"alt", "owner claims"}}}},
		{"remove wins over add", latest, []string{added}, []string{added, unknown, known},
			&events.OwnerClaims{PubKey: hexID(60), Content: "c", Extra: nostr.Tags{{"alt", "owner claims"}}}},
		{"no latest", nil, []string{added, added}, nil, &events.OwnerClaims{Agents: []string{added}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := events.MergeClaims(tt.latest, tt.add, tt.remove)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if len(latest.Agents) != 2 || latest.Agents[0] != unknown {
		t.Errorf("MergeClaims mutated latest: %v", latest.Agents)
	}
	merged := events.MergeClaims(latest, nil, nil)
	merged.Extra[0][1] = "changed"
	if latest.Extra[0][1] != "owner claims" {
		t.Error("MergeClaims shares Extra with latest")
	}
}

func TestMergeClaims_KeepsRelayHintsAndPetnames(t *testing.T) {
	owner := nostr.GeneratePrivateKey()
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	evt := nostr.Event{Kind: events.KindOwnerClaims, CreatedAt: 1, Tags: nostr.Tags{{"p", a, "wss://r.example", "reviewer"}}}
	if err := evt.Sign(owner); err != nil {
		t.Fatal(err)
	}
	latest, err := events.ParseOwnerClaims(&evt)
	if err != nil {
		t.Fatal(err)
	}
	got := events.MergeClaims(latest, []string{b}, nil).Template().Tags
	want := nostr.Tags{{"p", a, "wss://r.example", "reviewer"}, {"p", b}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tags = %v, want %v", got, want)
	}
}
