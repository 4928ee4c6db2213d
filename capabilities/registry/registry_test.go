package registry_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/capabilities/registry/registrytest"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/agentnode/agentnode/relay"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

const t0 = 1_700_000_000

func note(version string) registrytest.Spec {
	return registrytest.Spec{Name: "note", Version: version, Title: "Note",
		Description: "Create and manage personal notes", Keywords: []string{"jot"},
		Tools: []string{"state.create", "fetch_web_content"}, Permissions: []string{"state.create"}}
}

func TestRegistry_Resolve_versions(t *testing.T) {
	rel := registrytest.OpenRelay(t)
	alice, _ := registrytest.Key(t)
	registrytest.Publish(t, rel, alice, note("1.0.0"), t0)
	registrytest.Publish(t, rel, alice, note("1.10.0"), t0+10)
	registrytest.Publish(t, rel, alice, note("1.9.0"), t0+20)      // newer event, lower version
	registrytest.Publish(t, rel, alice, note("2.0.0-rc.1"), t0+30) // pre-release
	reg := registry.New(rel)
	ctx := context.Background()
	for ref, want := range map[string]string{
		"did:nuwa:cap:note":            "1.10.0",
		"note":                         "1.10.0",
		"did:nuwa:cap:note@1.0.0":      "1.0.0",
		"note@1.9.0":                   "1.9.0",
		"did:nuwa:cap:note@2.0.0-rc.1": "2.0.0-rc.1",
	} {
		e, err := reg.Resolve(ctx, ref, "")
		if err != nil {
			t.Fatalf("Resolve(%q): %v", ref, err)
		}
		if e.Version != want || e.URI != "did:nuwa:cap:note@"+want || e.Package == nil || e.Package.Version() != want {
			t.Errorf("Resolve(%q) = %s (package %v), want %s", ref, e.URI, e.Package, want)
		}
	}
	if _, err := reg.Resolve(ctx, "note@3.0.0", ""); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("missing version: got %v, want ErrNotFound", err)
	}
	if _, err := reg.Resolve(ctx, "other", ""); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("missing name: got %v, want ErrNotFound", err)
	}
	// naddr1qqqqxqgpwyvqvv has a one-byte kind: nip19.Decode panics on it
	for _, bad := range []string{"did:nuwa:cap:", "note@1.0", "no spaces allowed", "naddr1qqqq", "naddr1qqqqxqgpwyvqvv"} {
		if _, err := reg.Resolve(ctx, bad, ""); !errors.Is(err, registry.ErrBadRef) {
			t.Errorf("Resolve(%q): got %v, want ErrBadRef", bad, err)
		}
	}
}

// Only pre-releases: the highest of them is the latest.
func TestRegistry_Resolve_onlyPreReleases(t *testing.T) {
	rel := registrytest.OpenRelay(t)
	alice, _ := registrytest.Key(t)
	registrytest.Publish(t, rel, alice, note("1.0.0-beta.2"), t0)
	registrytest.Publish(t, rel, alice, note("1.0.0-beta.11"), t0-5)
	e, err := registry.New(rel).Resolve(context.Background(), "note", "")
	if err != nil || e.Version != "1.0.0-beta.11" {
		t.Fatalf("got %v, %v; want 1.0.0-beta.11", e, err)
	}
}

func TestRegistry_Resolve_naddr(t *testing.T) {
	rel := registrytest.OpenRelay(t)
	alice, alicePK := registrytest.Key(t)
	bob, _ := registrytest.Key(t)
	old := registrytest.Publish(t, rel, alice, note("1.0.0"), t0)
	registrytest.Publish(t, rel, alice, note("2.0.0"), t0+1)
	registrytest.Publish(t, rel, bob, note("1.0.0"), t0-100) // same d, other author
	naddr, err := nip19.EncodeEntity(alicePK, 30199, "note@1.0.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := registry.New(rel).Resolve(context.Background(), naddr, "")
	if err != nil {
		t.Fatal(err)
	}
	if e.EventID != old.ID || e.Author != alicePK || e.Naddr != naddr {
		t.Errorf("naddr resolved to %s by %s (%s), want %s by %s", e.EventID, e.Author, e.Naddr, old.ID, alicePK)
	}
	missing, _ := nip19.EncodeEntity(alicePK, 30199, "note@9.0.0", nil)
	if _, err := registry.New(rel).Resolve(context.Background(), missing, ""); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("missing naddr: got %v, want ErrNotFound", err)
	}
	wrongKind, _ := nip19.EncodeEntity(alicePK, 30023, "note@1.0.0", nil)
	if _, err := registry.New(rel).Resolve(context.Background(), wrongKind, ""); !errors.Is(err, registry.ErrBadRef) {
		t.Errorf("kind-30023 naddr: got %v, want ErrBadRef", err)
	}
}

// The documented rule for one name published by two authors.
func TestRegistry_Resolve_twoAuthors(t *testing.T) {
	rel := registrytest.OpenRelay(t)
	alice, alicePK := registrytest.Key(t)
	bob, bobPK := registrytest.Key(t)
	registrytest.Publish(t, rel, alice, note("1.0.0"), t0)     // alice claims the name first
	registrytest.Publish(t, rel, bob, note("5.0.0"), t0+100)   // bob later, with a higher version
	registrytest.Publish(t, rel, alice, note("1.1.0"), t0+200) // alice's latest
	ctx := context.Background()
	bobNpub, _ := nip19.EncodePublicKey(bobPK)

	tests := []struct {
		name      string
		reg       *registry.Registry
		ref       string
		author    string
		wantBy    string
		wantVer   string
		wantAlts  []string
		wantError error
	}{
		{"one load, none trusted: ambiguous", registry.New(rel), "note", "", "", "", nil, registry.ErrAmbiguous},
		{"explicit author wins", registry.New(rel), "note", bobPK, bobPK, "5.0.0", nil, nil},
		{"explicit author as npub", registry.New(rel), "note", bobNpub, bobPK, "5.0.0", nil, nil},
		{"explicit author without the name", registry.New(rel), "note", strings.Repeat("e", 64), "", "", nil, registry.ErrNotFound},
		{"preferred author wins", registry.New(rel, registry.WithPreferredAuthors(bobPK)), "note", "", bobPK, "5.0.0", []string{alicePK}, nil},
		{"preferred author as npub", registry.New(rel, registry.WithPreferredAuthors("junk", bobNpub)), "note", "", bobPK, "5.0.0", []string{alicePK}, nil},
		{"preferred author lacks the version", registry.New(rel, registry.WithPreferredAuthors(bobPK)), "note@1.0.0", "", alicePK, "1.0.0", nil, nil},
		{"explicit beats preferred", registry.New(rel, registry.WithPreferredAuthors(bobPK)), "note", alicePK, alicePK, "1.1.0", nil, nil},
		{"bad author", registry.New(rel), "note", "nobody", "", "", nil, registry.ErrBadAuthor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := tt.reg.Resolve(ctx, tt.ref, tt.author)
			if tt.wantError != nil {
				if !errors.Is(err, tt.wantError) {
					t.Fatalf("got %v, want %v", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var alts []string
			for _, a := range e.Alternatives {
				alts = append(alts, a.Author)
			}
			if e.Author != tt.wantBy || e.Version != tt.wantVer || !slices.Equal(alts, tt.wantAlts) {
				t.Errorf("got %s by %s (alternatives %v), want %s by %s (alternatives %v)",
					e.Version, e.Author, alts, tt.wantVer, tt.wantBy, tt.wantAlts)
			}
		})
	}
}

func TestRegistry_Search(t *testing.T) {
	rel := registrytest.OpenRelay(t)
	alice, alicePK := registrytest.Key(t)
	bob, _ := registrytest.Key(t)
	registrytest.Publish(t, rel, alice, note("1.0.0"), t0)
	registrytest.Publish(t, rel, alice, registrytest.Spec{Name: "note", Version: "2.0.0", Title: "Note",
		Description: "Notes, now with weather", Tools: []string{"state.create"}, Permissions: []string{"state.create"}}, t0+1)
	registrytest.Publish(t, rel, bob, registrytest.Spec{Name: "weather", Version: "1.0.0", Title: "Weather Reporter",
		Description: "Forecasts for any city", Keywords: []string{"forecast"}, Tools: []string{"get_current_weather"}}, t0+2)
	registrytest.Publish(t, rel, bob, registrytest.Spec{Name: "translator", Version: "0.1.0",
		Description: "Translate text between languages", Tools: []string{"translate"}, Permissions: []string{"state.query"}}, t0+3)
	reg := registry.New(rel)
	ctx := context.Background()

	tests := []struct {
		query string
		f     registry.Filters
		want  []string // URIs, in rank order
	}{
		{"weather", registry.Filters{}, []string{"did:nuwa:cap:weather@1.0.0", "did:nuwa:cap:note@2.0.0"}},
		{"forecast", registry.Filters{}, []string{"did:nuwa:cap:weather@1.0.0"}},
		{"translate", registry.Filters{}, []string{"did:nuwa:cap:translator@0.1.0"}},
		{"get_current_weather", registry.Filters{}, []string{"did:nuwa:cap:weather@1.0.0", "did:nuwa:cap:note@2.0.0"}}, // "weather" is a word of it
		{"fetch_web_content", registry.Filters{}, nil},                                                                 // only in note 1.0.0, which is not the latest
		{"NOTE languages", registry.Filters{}, []string{"did:nuwa:cap:note@2.0.0", "did:nuwa:cap:translator@0.1.0"}},   // name above description
		{"", registry.Filters{}, []string{"did:nuwa:cap:note@2.0.0", "did:nuwa:cap:translator@0.1.0", "did:nuwa:cap:weather@1.0.0"}},
		{"", registry.Filters{Author: alicePK}, []string{"did:nuwa:cap:note@2.0.0"}},
		{"", registry.Filters{Tool: "translate"}, []string{"did:nuwa:cap:translator@0.1.0"}},
		{"", registry.Filters{Permission: "state.create"}, []string{"did:nuwa:cap:note@2.0.0"}},
		{"", registry.Filters{Limit: 1}, []string{"did:nuwa:cap:note@2.0.0"}},
		{"klingon", registry.Filters{}, nil},
	}
	for _, tt := range tests {
		hits, err := reg.Search(ctx, tt.query, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.URI)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Search(%q, %+v) = %v, want %v", tt.query, tt.f, got, tt.want)
		}
	}
}

// Index (wired to OnStored) keeps a loaded registry current, deletions too.
func TestRegistry_Index(t *testing.T) {
	rel := registrytest.OpenRelay(t)
	alice, alicePK := registrytest.Key(t)
	reg := registry.New(rel)
	ctx := context.Background()
	if err := reg.Load(ctx); err != nil {
		t.Fatal(err)
	}
	defer rel.OnStored(reg.Index)()
	if _, err := reg.Resolve(ctx, "note", ""); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("empty relay: got %v", err)
	}
	v1 := registrytest.Publish(t, rel, alice, note("1.0.0"), t0)
	registrytest.Publish(t, rel, alice, note("1.1.0"), t0+1)
	if e, err := reg.Resolve(ctx, "note", ""); err != nil || e.Version != "1.1.0" {
		t.Fatalf("after publish: got %v, %v; want 1.1.0", e, err)
	}
	del := &nostr.Event{Kind: nostr.KindDeletion, CreatedAt: t0 + 2,
		Tags: nostr.Tags{{"a", fmt.Sprintf("30199:%s:note@1.1.0", alicePK)}, {"k", "30199"}}}
	if err := del.Sign(alice); err != nil {
		t.Fatal(err)
	}
	if err := rel.Publish(ctx, del); err != nil {
		t.Fatal(err)
	}
	e, err := reg.Resolve(ctx, "note", "")
	if err != nil || e.EventID != v1.ID {
		t.Fatalf("after deleting 1.1.0: got %v, %v; want 1.0.0", e, err)
	}
	if hits, _ := reg.Search(ctx, "notes", registry.Filters{}); len(hits) != 1 || hits[0].Version != "1.0.0" {
		t.Fatalf("search after delete: %v", hits)
	}
}

// Load pages past the relay's query limit.
func TestRegistry_Load_pages(t *testing.T) {
	limits := relay.DefaultLimits
	limits.MaxLimit, limits.DefaultLimit = 3, 3
	rel := testrelay.Open(t, relay.Config{Limits: limits})
	alice, _ := registrytest.Key(t)
	for i := range 10 {
		registrytest.Publish(t, rel, alice, registrytest.Spec{Name: fmt.Sprintf("cap%d", i), Version: "1.0.0"}, t0+int64(i))
	}
	reg := registry.New(rel)
	if err := reg.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := reg.Len(); got != 10 {
		t.Fatalf("loaded %d packages through a relay capping queries at 3, want 10", got)
	}
}

func TestRegistry_Search_relay(t *testing.T) {
	rel := registrytest.OpenRelay(t)
	alice, alicePK := registrytest.Key(t)
	bob, _ := registrytest.Key(t)
	registrytest.Publish(t, rel, alice, note("1.0.0"), t0)
	registrytest.Publish(t, rel, alice, note("1.1.0"), t0+1)
	registrytest.Publish(t, rel, bob, registrytest.Spec{Name: "weather", Version: "1.0.0", Title: "Weather Reporter",
		Description: "Forecasts for any city", Keywords: []string{"forecast"}, Tools: []string{"get_current_weather"}}, t0+2)
	reg := registry.New(rel, registry.WithRelaySearch())
	ctx := context.Background()
	tests := []struct {
		query string
		f     registry.Filters
		want  []string
	}{
		{"forecasts", registry.Filters{}, []string{"did:nuwa:cap:weather@1.0.0"}},
		{"notes", registry.Filters{}, []string{"did:nuwa:cap:note@1.1.0"}}, // both versions match: one result, the latest
		{"notes", registry.Filters{Author: alicePK}, []string{"did:nuwa:cap:note@1.1.0"}},
		{"forecasts", registry.Filters{Author: alicePK}, nil},
		{"forecasts", registry.Filters{Permission: "state.delete"}, nil},
		{"klingon", registry.Filters{}, nil},
	}
	for _, tt := range tests {
		hits, err := reg.Search(ctx, tt.query, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.URI)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("relay Search(%q, %+v) = %v, want %v", tt.query, tt.f, got, tt.want)
		}
	}
}

// A package the index accepts (tags, signature, metadata.id agree) but acp
// refuses (a state.* tool without its permission) is listed by search and
// refused by resolve with acp's reason.
func TestRegistry_Resolve_invalidPackage(t *testing.T) {
	rel := registrytest.OpenRelay(t)
	alice, _ := registrytest.Key(t)
	raw := string(registrytest.Spec{Name: "broken", Version: "1.0.0"}.YAML())
	raw = strings.Replace(raw, `require: ["state.create"]`, `require: []`, 1)
	signed, err := acp.SignAs([]byte(raw), alice, acp.SigFormNostr)
	if err != nil {
		t.Fatal(err)
	}
	raw = string(signed)
	c := events.Capability{Name: "broken", Version: "1.0.0", SchemaURI: "did:nuwa:state:broken#v1",
		Tools: []string{"state.create"}, Content: raw}
	evt := c.Template()
	evt.CreatedAt = t0
	if err := evt.Sign(alice); err != nil {
		t.Fatal(err)
	}
	if err := rel.Publish(context.Background(), &evt); err != nil {
		t.Fatal(err)
	}
	reg := registry.New(rel)
	if hits, _ := reg.Search(context.Background(), "broken", registry.Filters{}); len(hits) != 1 {
		t.Fatalf("search: %v", hits)
	}
	_, err = reg.Resolve(context.Background(), "broken", "")
	if !errors.Is(err, registry.ErrInvalid) || !strings.Contains(err.Error(), "state.create") {
		t.Fatalf("resolve: got %v, want ErrInvalid naming state.create", err)
	}
}

// Index, Search and Resolve run concurrently (run with -race).
func TestRegistry_concurrent(t *testing.T) {
	rel := registrytest.OpenRelay(t)
	alice, _ := registrytest.Key(t)
	reg := registry.New(rel)
	ctx := context.Background()
	if err := reg.Load(ctx); err != nil {
		t.Fatal(err)
	}
	defer rel.OnStored(reg.Index)()
	done := make(chan error, 1)
	go func() { // owned: the test waits on done
		for i := range 20 {
			evt, err := registrytest.Event(note(fmt.Sprintf("1.%d.0", i)), alice, t0+int64(i))
			if err == nil {
				err = rel.Publish(ctx, evt)
			}
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for range 50 {
		if _, err := reg.Search(ctx, "notes", registry.Filters{}); err != nil {
			t.Fatal(err)
		}
		if _, err := reg.Resolve(ctx, "note", ""); err != nil && !errors.Is(err, registry.ErrNotFound) {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if e, err := reg.Resolve(ctx, "note", ""); err != nil || e.Version != "1.19.0" {
		t.Fatalf("after the writer: %v, %v", e, err)
	}
}
