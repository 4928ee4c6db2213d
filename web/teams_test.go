package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// TestSite_IndexListsTeams: the index lists the newest teams (kind
// 34199), each member linked, the first marked the default, at most
// maxTeams of them however many are stored.
func TestSite_IndexListsTeams(t *testing.T) {
	rel, srv := openSite(t, 10)
	sk := nostr.GeneratePrivateKey()
	lead, helper := strings.Repeat("a", 64), strings.Repeat("b", 64)
	for i := range 25 {
		team := events.Team{Slug: fmt.Sprint("team-", i), Title: fmt.Sprint("Team ", i), Members: []events.EventRef{{ID: lead}, {ID: helper}}}
		evt := team.Template()
		evt.CreatedAt = nostr.Timestamp(1_700_000_000 + i)
		if err := evt.Sign(sk); err != nil {
			t.Fatal(err)
		}
		if err := rel.Publish(context.Background(), &evt); err != nil {
			t.Fatal(err)
		}
	}
	_, page := get(t, srv.URL+"/", "Accept", "text/html")
	if !strings.Contains(page, `id="teams"`) || !strings.Contains(page, "Team 24") || !strings.Contains(page, `href="/definitions/`+lead+`"`) || !strings.Contains(page, "(default)") {
		t.Fatalf("the index does not list the newest team with its members:\n%s", page)
	}
	if n := strings.Count(page, `class="team"`); n != 20 {
		t.Fatalf("the index lists %d teams, want the newest 20", n)
	}
}
