package agentd_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/lookup"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/netguard"
	"github.com/agentnode/agentnode/internal/testkit"
)

// A definition published only on another relay installs: by an nevent
// naming that relay, and by npub:slug when that relay is a peer; the
// lookup stores it, so the agent's definition is local afterwards.
// Without FindDefinition the same install is ErrDefinitionNotFound.
func TestInstall_looksUpADefinitionItLacks(t *testing.T) {
	home := openNode(t, agentd.Config{})
	srv := httptest.NewServer(home.r)
	t.Cleanup(srv.Close)
	homeURL := "ws" + strings.TrimPrefix(srv.URL, "http")
	author, owner := testkit.NewKey(t), testkit.NewKey(t)
	def := home.definition(author, reviewer())
	other := events.Definition{Slug: "writer", Title: "Writer", Role: "You write.", Version: "1"}
	home.definition(author, other)

	var lk *lookup.Lookup
	var peers []string
	find := func(ctx context.Context, ref agentd.DefinitionRef) error {
		_, err := lk.Resolve(ctx, lookup.Pointer{ID: ref.ID, Kind: events.KindDefinition, Author: ref.Author, Relays: ref.Relays})
		return err
	}
	n := openNode(t, agentd.Config{FindDefinition: find})
	lk = lookup.New(lookup.Config{Local: n.r, Peers: func() []string { return peers }, Logger: quiet,
		Network: netguard.Policy{AllowPrivate: true}}) // its relays are on 127.0.0.1

	plain := openNode(t, agentd.Config{})
	if _, err := plain.d.Install(context.Background(), agentd.InstallRequest{Definition: def.ID, Owner: owner.PK}); !errors.Is(err, agentd.ErrDefinitionNotFound) {
		t.Fatalf("install without lookups: %v, want ErrDefinitionNotFound", err)
	}

	nevent, _ := nip19.EncodeEvent(def.ID, []string{homeURL}, author.PK)
	got := n.install(agentd.InstallRequest{Definition: nevent, Owner: owner.PK})
	if got.Agent.DefinitionID != def.ID || lk.Source(def.ID) != homeURL {
		t.Fatalf("installed %+v; definition's source %q, want %s", got.Agent, lk.Source(def.ID), homeURL)
	}

	peers = []string{homeURL}
	npub, _ := nip19.EncodePublicKey(author.PK)
	got = n.install(agentd.InstallRequest{Definition: npub + ":writer", Owner: owner.PK})
	if got.Agent.DefinitionKey != author.PK+":writer" {
		t.Fatalf("installed %+v, want the writer definition", got.Agent)
	}
}
