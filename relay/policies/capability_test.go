package policies_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/relay"
)

// capRelay is the real relay behind a real websocket, and a client.
type capRelay struct {
	r *relay.Relay
	c *nostr.Relay
}

func openCapRelay(t *testing.T) *capRelay {
	t.Helper()
	ctx := context.Background()
	r, err := relay.Open(ctx, relay.Config{DataDir: t.TempDir(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(func() {
		srv.Close()
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		r.Close(cctx)
	})
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := nostr.RelayConnect(cctx, "ws"+strings.TrimPrefix(srv.URL, "http"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &capRelay{r: r, c: c}
}

func (cr *capRelay) publish(t *testing.T, evt *nostr.Event) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return cr.c.Publish(ctx, *evt)
}

func (cr *capRelay) query(t *testing.T, f nostr.Filter) []*nostr.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	evts, err := cr.c.QuerySync(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	return evts
}

func capContent(version, prompt string) string {
	return "metadata:\n  id: did:nuwa:cap:note@" + version + "\n  name: Note\n  description: Jot down notes\n" +
		"schema: '{\"$id\":\"did:nuwa:state:note#v1\",\"type\":\"object\"}'\nprompt: " + prompt + "\ntools:\n" +
		"  - type: function\n    function: {name: summarise_pelicans, description: Summarises pelican sightings}\n"
}

func capTemplate(version, prompt string) nostr.Event {
	c := events.Capability{Name: "note", Version: version, Title: "Note", SchemaURI: "did:nuwa:state:note#v1",
		Tools: []string{"summarise_pelicans"}, Content: capContent(version, prompt)}
	return c.Template()
}

func signAt(t *testing.T, sk string, tmpl nostr.Event, at nostr.Timestamp) *nostr.Event {
	t.Helper()
	tmpl.CreatedAt = at
	if err := tmpl.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return &tmpl
}

func wantRefusal(t *testing.T, err error, prefix string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), prefix) {
		t.Fatalf("publish = %v, want a refusal %q", err, prefix)
	}
}

// A published (author, name, version) is immutable; the same content again
// is fine; a new version, or another author, is fine.
func TestGuardCapabilities_Immutable(t *testing.T) {
	cr := openCapRelay(t)
	alice, bob := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	now := nostr.Now()
	first := signAt(t, alice, capTemplate("1.0.0", "Be brief."), now-10)
	if err := cr.publish(t, first); err != nil {
		t.Fatal(err)
	}
	again := signAt(t, alice, capTemplate("1.0.0", "Be brief."), now-5)
	if err := cr.publish(t, again); err != nil {
		t.Fatalf("same content re-published: %v", err)
	}
	changed := signAt(t, alice, capTemplate("1.0.0", "Be verbose."), now)
	wantRefusal(t, cr.publish(t, changed),
		"blocked: note@1.0.0 is already published by this author with other content; publish a new version")
	addr := nostr.Filter{Kinds: []int{events.KindCapability}, Authors: []string{first.PubKey}, Tags: nostr.TagMap{"d": {"note@1.0.0"}}}
	got := cr.query(t, addr)
	if len(got) != 1 || !strings.Contains(got[0].Content, "Be brief.") {
		t.Fatalf("stored: %v", got)
	}
	if err := cr.publish(t, signAt(t, alice, capTemplate("1.1.0", "Be verbose."), now)); err != nil {
		t.Errorf("new version: %v", err)
	}
	if err := cr.publish(t, signAt(t, bob, capTemplate("1.0.0", "Be verbose."), now)); err != nil {
		t.Errorf("another author's note@1.0.0: %v", err)
	}
}

func TestGuardCapabilities_Invalid(t *testing.T) {
	cr := openCapRelay(t)
	sk := nostr.GeneratePrivateKey()
	tests := []struct {
		name string
		edit func(e *nostr.Event)
		want string
	}{
		{"d not name@version", func(e *nostr.Event) { e.Tags[0] = nostr.Tag{"d", "note@2.0.0"} },
			`invalid: kind 30199: tag "d": must be "<name>@<version>" of the name and version tags`},
		{"x of other content", func(e *nostr.Event) { e.Content += "\n# edited" },
			`invalid: kind 30199: tag "x": not the sha256 of the content`},
		{"version not semver", func(e *nostr.Event) {
			e.Tags[0], e.Tags[2] = nostr.Tag{"d", "note@1"}, nostr.Tag{"version", "1"}
		}, `invalid: kind 30199: tag "version": not a semantic version (semver 2.0.0)`},
		{"no m", func(e *nostr.Event) { e.Tags = e.Tags[:5] },
			`invalid: kind 30199: tag "m": required tag missing`},
		{"content names another capability", func(e *nostr.Event) {
			e.Content = strings.Replace(e.Content, "note@1.0.0", "other@1.0.0", 1)
			e.Tags[4] = nostr.Tag{"x", events.ContentSHA256(e.Content)}
		}, `invalid: kind 30199: content: metadata.id is not "did:nuwa:cap:" + the "d" tag`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := capTemplate("1.0.0", "Be brief.")
			tt.edit(&tmpl)
			wantRefusal(t, cr.publish(t, signAt(t, sk, tmpl, nostr.Now())), tt.want)
		})
	}
	if got := cr.query(t, nostr.Filter{Kinds: []int{events.KindCapability}}); len(got) != 0 {
		t.Errorf("%d refused events stored", len(got))
	}
}

// NIP-50 search finds a package by its tool's description.
func TestGuardCapabilities_Searchable(t *testing.T) {
	cr := openCapRelay(t)
	evt := signAt(t, nostr.GeneratePrivateKey(), capTemplate("1.0.0", "Be brief."), nostr.Now())
	if err := cr.publish(t, evt); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"pelican", "jot", "summarise_pelicans"} {
		got := cr.query(t, nostr.Filter{Search: q, Kinds: []int{events.KindCapability}})
		if len(got) != 1 || got[0].ID != evt.ID {
			t.Errorf("search %q: %d events", q, len(got))
		}
	}
	if got := cr.query(t, nostr.Filter{Search: "brief"}); len(got) != 0 {
		t.Errorf("the prompt is not indexed, yet %q found %d", "brief", len(got))
	}
}

// After the author deletes the address (NIP-09), that version may be
// published again with other content.
func TestGuardCapabilities_AfterDeletion(t *testing.T) {
	cr := openCapRelay(t)
	sk := nostr.GeneratePrivateKey()
	now := nostr.Now()
	first := signAt(t, sk, capTemplate("1.0.0", "Be brief."), now-20)
	if err := cr.publish(t, first); err != nil {
		t.Fatal(err)
	}
	del := signAt(t, sk, nostr.Event{Kind: 5, Tags: nostr.Tags{{"a", "30199:" + first.PubKey + ":note@1.0.0"}}}, now-10)
	if err := cr.publish(t, del); err != nil {
		t.Fatal(err)
	}
	if err := cr.publish(t, signAt(t, sk, capTemplate("1.0.0", "Be verbose."), now)); err != nil {
		t.Errorf("republish after deletion: %v", err)
	}
}
