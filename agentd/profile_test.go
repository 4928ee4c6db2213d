package agentd_test

import (
	"context"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

// TestDaemon_InstallProfileMetadata: the agent's kind 0 carries about
// (the definition's description, else its role), picture (its image) and
// bot: true, for clients that show profiles.
func TestDaemon_InstallProfileMetadata(t *testing.T) {
	n := openNode(t, agentd.Config{})
	author, owner := testkit.NewKey(t), testkit.NewKey(t)
	withImage := reviewer()
	withImage.Description, withImage.Image = "Reviews Go code for errors.", "https://example.org/reviewer.png"
	roleOnly := reviewer()
	roleOnly.Slug, roleOnly.Title = "role-only", "Role Only"
	for _, c := range []struct {
		def        events.Definition
		about, pic string
	}{{withImage, "Reviews Go code for errors.", "https://example.org/reviewer.png"}, {roleOnly, "You review Go code.", ""}} {
		def := n.definition(author, c.def)
		a := n.install(agentd.InstallRequest{Definition: def.ID, Owner: owner.PK}).Agent
		evts, err := n.r.QuerySync(context.Background(), nostr.Filter{Kinds: []int{0}, Authors: []string{a.PubKey}})
		if err != nil || len(evts) != 1 {
			t.Fatalf("kind 0 of the agent: %d events, %v", len(evts), err)
		}
		p, err := events.ParseProfile(evts[0])
		if err != nil {
			t.Fatal(err)
		}
		pic, _ := p.Metadata["picture"].(string)
		if p.Metadata["bot"] != true || p.Metadata["about"] != c.about || pic != c.pic {
			t.Errorf("%s: profile metadata %v, want bot true, about %q, picture %q", c.def.Title, p.Metadata, c.about, c.pic)
		}
	}
}
