package acp_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/relay"
)

func signEvent(t testing.TB, sk string, tmpl nostr.Event) *nostr.Event {
	t.Helper()
	evt := tmpl
	evt.CreatedAt = nostr.Now()
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return &evt
}

func TestEventTemplate_Tags(t *testing.T) {
	raw := replace(t, note(t), `    - {type: regex, value: "记(.*)笔记|note|add note about"}`,
		`    - {type: regex, value: "记(.*)笔记|note|add note about"}
    - {type: keyword, value: "Notes"}`)
	p := mustParse(t, mustSign(t, raw, skAlice))
	evt := acp.EventTemplate(p)
	if evt.Kind != events.KindCapability || evt.Content != string(p.Raw) {
		t.Fatalf("kind %d, content differs: %v", evt.Kind, evt.Content != string(p.Raw))
	}
	want := nostr.Tags{{"d", "note@1.0.0"}, {"name", "note"}, {"version", "1.0.0"}, {"title", "Note"},
		{"x", events.ContentSHA256(string(p.Raw))}, {"m", "application/yaml"}, {"schema", "did:nuwa:state:note#v1"},
		{"tool", "state.create"}, {"tool", "fetch_web_content"}, {"tool", "recognize_image_content"},
		{"t", "notes"}, {"alt", "ACP capability package note@1.0.0"}}
	if !slices.EqualFunc(evt.Tags, want, func(a, b nostr.Tag) bool { return slices.Equal(a, b) }) {
		t.Errorf("tags\n got %v\nwant %v", evt.Tags, want)
	}
}

func TestFromEvent_RoundTrip(t *testing.T) {
	signed := mustSign(t, note(t), skAlice)
	evt := signEvent(t, skAlice, acp.EventTemplate(mustParse(t, signed)))
	p, err := acp.FromEvent(evt, acp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if string(p.Raw) != string(signed) || p.URI() != "did:nuwa:cap:note@1.0.0" {
		t.Errorf("got %s", p.URI())
	}
}

func TestFromEvent_Refusals(t *testing.T) {
	signedAlice := mustSign(t, note(t), skAlice)
	good := acp.EventTemplate(mustParse(t, signedAlice))
	tests := []struct {
		name string
		sk   string
		edit func(e *nostr.Event)
		want error
		msg  string
	}{
		{"file signed by another key", skBob, func(*nostr.Event) {}, events.ErrBadContent, "metadata.signature.pubkey is not the event's author"},
		{"content changed, x not", skAlice, func(e *nostr.Event) { e.Content += "\n" }, events.ErrBadValue, "not the sha256 of the content"},
		{"tool tags lie", skAlice, func(e *nostr.Event) { e.Tags = append(e.Tags, nostr.Tag{"tool", "rm_rf"}) }, acp.ErrEventMismatch, "tool tags"},
		{"schema tag lies", skAlice, func(e *nostr.Event) { setTag(e, "schema", "did:nuwa:state:other#v1") }, acp.ErrEventMismatch, "schema tag"},
		{"invalid package", skAlice, func(e *nostr.Event) {
			e.Content = strings.Replace(e.Content, "memory_scope: sc:note", "memory_scope: note", 1)
			setTag(e, "x", events.ContentSHA256(e.Content))
		}, acp.ErrInvalid, "line 8: metadata.memory_scope"},
		{"tampered signed file", skAlice, func(e *nostr.Event) {
			e.Content = strings.Replace(e.Content, "You are Note Assistant.", "You are Evil Assistant.", 1)
			setTag(e, "x", events.ContentSHA256(e.Content))
		}, acp.ErrBadSignature, "does not verify"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := good
			tmpl.Tags = slices.Clone(good.Tags)
			tt.edit(&tmpl)
			_, err := acp.FromEvent(signEvent(t, tt.sk, tmpl), acp.Options{})
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("FromEvent = %v, want %v ...%s...", err, tt.want, tt.msg)
			}
		})
	}
	evt := signEvent(t, skAlice, good)
	evt.Sig = strings.Repeat("0", 128)
	if _, err := acp.FromEvent(evt, acp.Options{}); !errors.Is(err, acp.ErrBadSignature) {
		t.Errorf("bad event signature: %v", err)
	}
}

// An unsigned file published as an event used to be accepted (the
// event's own signature standing for authorship); Nuwa NIP-7 rejects
// unsigned packages, and a stranger could publish any name unsigned.
func TestFromEvent_UnsignedFileRefused(t *testing.T) {
	evt := signEvent(t, skBob, acp.EventTemplate(mustParse(t, weather(t))))
	if _, err := acp.FromEvent(evt, acp.Options{}); !errors.Is(err, acp.ErrUnsigned) {
		t.Fatalf("unsigned file: %v, want ErrUnsigned", err)
	}
	signed := signEvent(t, skBob, acp.EventTemplate(mustParse(t, mustSign(t, weather(t), skBob))))
	if _, err := acp.FromEvent(signed, acp.Options{}); err != nil {
		t.Fatalf("the same file signed by the author: %v", err)
	}
}

func setTag(e *nostr.Event, name, value string) {
	for i, tag := range e.Tags {
		if tag[0] == name {
			e.Tags[i] = nostr.Tag{name, value}
		}
	}
}

// The spec's examples go through a real relay and come back.
func TestPublish_ThroughRelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := relay.Open(ctx, relay.Config{DataDir: t.TempDir(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	for _, name := range []string{"note.acp.yaml", "weatherreporter.acp.yaml"} {
		signed := mustSign(t, readTestdata(t, name), skAlice)
		evt := signEvent(t, skAlice, acp.EventTemplate(mustParse(t, signed)))
		if err := r.Publish(ctx, evt); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := mustParse(t, signed)
		got, err := r.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindCapability}, Authors: []string{evt.PubKey},
			Tags: nostr.TagMap{"d": {p.Name() + "@" + p.Version()}}})
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: query: %d events, %v", name, len(got), err)
		}
		back, err := acp.FromEvent(got[0], acp.Options{})
		if err != nil {
			t.Fatalf("%s: FromEvent: %v", name, err)
		}
		if string(back.Raw) != string(signed) {
			t.Errorf("%s: content changed on the way", name)
		}
		if pk, err := acp.Verify(back.Raw); err != nil || pk != evt.PubKey {
			t.Errorf("%s: Verify after the round trip: %q %v", name, pk, err)
		}
	}
}
