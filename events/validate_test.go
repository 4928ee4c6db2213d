package events_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

func TestValidate_Refusals(t *testing.T) {
	id, pk := hexID(1), hexID(2)
	tests := []refusal{
		// The refusal examples.
		{"4199 without title or d", event(4199, "", nostr.Tag{"role", "r"}),
			events.ErrMissingTag, `kind 4199: tag "title": needs a title or a "d" (its name)`},
		{"4129 whose e is not 64-hex", event(4129, "x", nostr.Tag{"title", "t"}, nostr.Tag{"e", "abc"}),
			events.ErrBadID, `kind 4129: tag "e": not a 64-hex event id`},
		{"1111 on a lesson without K, bad root id", event(1111, "x", nostr.Tag{"E", "xyz"}, nostr.Tag{"e", id}, nostr.Tag{"k", "4129"}),
			events.ErrBadID, `kind 1111: tag "E": not a 64-hex event id`},
		{"14199 p not a pubkey", event(14199, "", nostr.Tag{"p", pk}, nostr.Tag{"p", "npub1xyz"}),
			events.ErrBadPubKey, `kind 14199: tag "p": not a 64-hex pubkey`},
		{"kind 0 bot whose e is not an id", event(0, `{"name":"a"}`, nostr.Tag{"bot"}, nostr.Tag{"e", "note1abc"}),
			events.ErrBadID, `kind 0: tag "e": not a 64-hex event id`},

		// 4199
		{"4199 blank title", event(4199, "", nostr.Tag{"title", "  "}),
			events.ErrBadValue, `kind 4199: tag "title": empty value`},
		{"4199 e bad id", event(4199, "", nostr.Tag{"title", "t"}, nostr.Tag{"e", "ID"}),
			events.ErrBadID, `kind 4199: tag "e": not a 64-hex event id`},
		{"4199 e upper-case hex", event(4199, "", nostr.Tag{"title", "t"}, nostr.Tag{"e", "AB" + id[2:]}),
			events.ErrBadID, `kind 4199: tag "e": not a 64-hex event id`},
		{"4199 image javascript", event(4199, "", nostr.Tag{"title", "t"}, nostr.Tag{"image", "javascript:alert(1)"}),
			events.ErrBadValue, `kind 4199: tag "image": not an image URI a client can render safely (absolute; not javascript:, vbscript:, file: or a non-image or SVG data:)`},
		{"4199 image html data", event(4199, "", nostr.Tag{"title", "t"}, nostr.Tag{"image", "data:text/html,<script>x</script>"}),
			events.ErrBadValue, `kind 4199: tag "image": not an image URI a client can render safely (absolute; not javascript:, vbscript:, file: or a non-image or SVG data:)`},
		{"4199 image relative", event(4199, "", nostr.Tag{"title", "t"}, nostr.Tag{"image", "/a.png"}),
			events.ErrBadValue, `kind 4199: tag "image": not an image URI a client can render safely (absolute; not javascript:, vbscript:, file: or a non-image or SVG data:)`},
		{"4199 empty tool", event(4199, "", nostr.Tag{"title", "t"}, nostr.Tag{"tool"}),
			events.ErrBadValue, `kind 4199: tag "tool": empty value`},
		{"4199 empty tag name", event(4199, "", nostr.Tag{"title", "t"}, nostr.Tag{"", "x"}),
			events.ErrBadTag, `kind 4199: tag "": empty tag name`},
		{"4199 empty tag", event(4199, "", nostr.Tag{"title", "t"}, nostr.Tag{}),
			events.ErrBadTag, `kind 4199: tag "": empty tag name`},

		// 4201
		{"4201 neither title, content nor tool", event(4201, " ", nostr.Tag{"d", "x"}),
			events.ErrMissingTag, `kind 4201: tag "title": needs a title, content or a tool tag`},
		{"4201 empty only-tool", event(4201, "be brief", nostr.Tag{"only-tool", ""}),
			events.ErrBadValue, `kind 4201: tag "only-tool": empty value`},
		{"4201 empty allow-tool", event(4201, "be brief", nostr.Tag{"allow-tool"}),
			events.ErrBadValue, `kind 4201: tag "allow-tool": empty value`},
		{"4201 empty deny-tool", event(4201, "be brief", nostr.Tag{"deny-tool", " "}),
			events.ErrBadValue, `kind 4201: tag "deny-tool": empty value`},

		// 4129
		{"4129 neither title nor content", event(4129, " ", nostr.Tag{"e", id}),
			events.ErrMissingTag, `kind 4129: tag "title": needs a title or content`},

		// 1111
		{"1111 k 4129 without any root", event(1111, "x", nostr.Tag{"k", "4129"}),
			events.ErrMissingTag, `kind 1111: tag "E": missing root event reference`},
		{"1111 k 4129 but K differs", event(1111, "x", nostr.Tag{"E", id}, nostr.Tag{"K", "1"}, nostr.Tag{"e", id}, nostr.Tag{"k", "4129"}),
			events.ErrBadValue, `kind 1111: tag "K": must be 4129 when parent kind "k" is 4129`},
		{"1111 K not a number", event(1111, "x", nostr.Tag{"E", id}, nostr.Tag{"K", "lesson"}),
			events.ErrBadValue, `kind 1111: tag "K": not a kind number`},
		{"1111 k not a number", event(1111, "x", nostr.Tag{"E", id}, nostr.Tag{"K", "4129"}, nostr.Tag{"k", "-1"}),
			events.ErrBadValue, `kind 1111: tag "k": not a kind number`},
		{"1111 lesson E bad id", event(1111, "x", nostr.Tag{"E", "xyz"}, nostr.Tag{"K", "4129"}),
			events.ErrBadID, `kind 1111: tag "E": not a 64-hex event id`},
		{"1111 lesson e bad id", event(1111, "x", nostr.Tag{"E", id}, nostr.Tag{"K", "4129"}, nostr.Tag{"e", "xyz"}, nostr.Tag{"k", "1111"}),
			events.ErrBadID, `kind 1111: tag "e": not a 64-hex event id`},
		{"1111 lesson P bad pubkey", event(1111, "x", nostr.Tag{"E", id}, nostr.Tag{"K", "4129"}, nostr.Tag{"P", "bob"}),
			events.ErrBadPubKey, `kind 1111: tag "P": not a 64-hex pubkey`},
		{"1111 lesson p bad pubkey", event(1111, "x", nostr.Tag{"E", id}, nostr.Tag{"K", "4129"}, nostr.Tag{"p", ""}),
			events.ErrBadPubKey, `kind 1111: tag "p": not a 64-hex pubkey`},
		{"1111 lesson without root", event(1111, "x", nostr.Tag{"K", "4129"}),
			events.ErrMissingTag, `kind 1111: tag "E": missing root event reference`},

		// 0 with bot
		{"0 bot p not a pubkey", event(0, `{}`, nostr.Tag{"bot"}, nostr.Tag{"p", "alice"}),
			events.ErrBadPubKey, `kind 0: tag "p": not a 64-hex pubkey`},
		{"0 bot content not JSON", event(0, `name: bot`, nostr.Tag{"bot"}),
			events.ErrBadContent, `kind 0: content: not a JSON object`},
		{"0 bot content a JSON array", event(0, `["a"]`, nostr.Tag{"bot"}),
			events.ErrBadContent, `kind 0: content: not a JSON object`},
		{"0 bot content empty", event(0, ``, nostr.Tag{"bot"}),
			events.ErrBadContent, `kind 0: content: not a JSON object`},

		// 5
		{"5 e not an id", event(5, "", nostr.Tag{"e", "x"}),
			events.ErrBadID, `kind 5: tag "e": not a 64-hex event id`},
		{"5 k not a kind", event(5, "", nostr.Tag{"e", id}, nostr.Tag{"k", "lesson"}),
			events.ErrBadValue, `kind 5: tag "k": not a kind number`},
	}
	checkRefusals(t, events.Validate, tests)
}

func TestValidate_Accepts(t *testing.T) {
	id, pk := hexID(1), hexID(2)
	tests := []struct {
		name string
		evt  *nostr.Event
	}{
		{"unknown kind with anything", event(1, "hi", nostr.Tag{}, nostr.Tag{"e", "x"})},
		{"kind 0 without bot is not checked", event(0, "not json", nostr.Tag{"e", "x"}, nostr.Tag{"p", "y"})},
		{"kind 0 bot", event(0, ` {"name":"Code Reviewer"}`, nostr.Tag{"bot"}, nostr.Tag{"e", id}, nostr.Tag{"p", pk})},
		{"4199 minimal", event(4199, "", nostr.Tag{"title", "t"})},
		{"4199 full", event(4199, "# md", nostr.Tag{"d", "s"}, nostr.Tag{"title", "t"}, nostr.Tag{"ver", "1.2.3-rc1"},
			nostr.Tag{"image", "HTTPS://example.com/a.png"}, nostr.Tag{"tool", "x"},
			nostr.Tag{"e", id}, nostr.Tag{"e", id, "wss://r"}, nostr.Tag{"e", id, "", ""}, nostr.Tag{"e", id, "", "file"}, nostr.Tag{"e", id, "", "fork"})},
		{"4201 title only", event(4201, "", nostr.Tag{"title", "t"})},
		{"4201 content only", event(4201, "be brief", nostr.Tag{"deny-tool", "shell"})},
		{"4129", event(4129, "", nostr.Tag{"title", "t"}, nostr.Tag{"category", "c"}, nostr.Tag{"e", id}, nostr.Tag{"t", "go"})},
		{"1111 strict on a lesson", event(1111, "x", nostr.Tag{"E", id, "", pk}, nostr.Tag{"K", "4129"}, nostr.Tag{"P", pk},
			nostr.Tag{"e", id, "", pk}, nostr.Tag{"k", "4129"}, nostr.Tag{"p", pk})},
		{"1111 lesson with root-marked e", event(1111, "x", nostr.Tag{"K", "4129"}, nostr.Tag{"e", id, "", "root"})},
		{"1111 other NIP-22 root kind", event(1111, "x", nostr.Tag{"E", "not-checked"}, nostr.Tag{"K", "1"}, nostr.Tag{"e", "x"}, nostr.Tag{"k", "1"})},
		{"1111 on an address or URL", event(1111, "x", nostr.Tag{"A", "30023:" + pk + ":d"}, nostr.Tag{"K", "30023"}, nostr.Tag{"I", "https://x"})},
		{"14199 empty", event(14199, "")},
		{"14199", event(14199, "", nostr.Tag{"p", pk}, nostr.Tag{"alt", "owner claims"})},
		{"5", event(5, "", nostr.Tag{"e", id}, nostr.Tag{"k", "4129"}, nostr.Tag{"a", "whatever"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := events.Validate(tt.evt); err != nil {
				t.Errorf("refused: %v", err)
			}
		})
	}
	if err := events.Validate(nil); err != events.ErrNilEvent {
		t.Errorf("Validate(nil) = %v", err)
	}
}

func TestValidationError_Error(t *testing.T) {
	long := &events.ValidationError{Kind: 1, Tag: string(make([]byte, 100)), Reason: "r"}
	if n := len(long.Error()); n > 200 {
		t.Errorf("hostile tag name not clipped: %d bytes", n)
	}
}

// kindsDoc returns docs/KINDS.md, which must spell every refusal the same way.
// refusal is a case of a validator's refusal table.
type refusal struct {
	name    string
	evt     *nostr.Event
	wantErr error
	wantMsg string
}

// checkRefusals runs validate on each case: it must refuse evt with
// wantMsg, a *ValidationError of evt's kind wrapping wantErr, and
// docs/KINDS.md must spell wantMsg out.
func checkRefusals(t *testing.T, validate func(*nostr.Event) error, tests []refusal) {
	t.Helper()
	doc := kindsDoc(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(doc, "`"+tt.wantMsg+"`") {
				t.Errorf("docs/KINDS.md does not spell out %s", tt.wantMsg)
			}
			err := validate(tt.evt)
			if err == nil {
				t.Fatal("accepted, want refusal")
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("message\n got %s\nwant %s", err, tt.wantMsg)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantErr)
			}
			var verr *events.ValidationError
			if !errors.As(err, &verr) || verr.Kind != tt.evt.Kind {
				t.Errorf("not a *ValidationError for kind %d: %#v", tt.evt.Kind, err)
			}
		})
	}
}

func kindsDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/KINDS.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
