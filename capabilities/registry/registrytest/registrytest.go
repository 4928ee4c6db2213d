package registrytest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/relay"
	"github.com/nbd-wtf/go-nostr"
)

// Spec describes a generated package. Empty fields get defaults derived
// from Name.
type Spec struct {
	Name, Version string
	Title         string   // metadata.name
	Description   string   // metadata.description
	Keywords      []string // keyword triggers
	Tools         []string // tool names (each takes {text: string})
	Permissions   []string // permissions.require
	State         string   // the schema's $id (default did:nuwa:state:<Name>#v1)
	// FileSigner signs the file's metadata.signature (default: the event's
	// author, what a package must have to be resolved and installed);
	// Unsigned leaves the file without one.
	FileSigner string
	Unsigned   bool
}

// YAML renders s as an .acp.yaml file.
func (s Spec) YAML() []byte {
	if s.Title == "" {
		s.Title = s.Name
	}
	if s.Description == "" {
		s.Description = "The " + s.Name + " capability."
	}
	if len(s.Tools) == 0 {
		s.Tools = []string{"state.create"}
	}
	for _, t := range s.Tools { // a state.* tool needs its permission
		if strings.HasPrefix(t, "state.") && !slices.Contains(s.Permissions, t) {
			s.Permissions = append(s.Permissions, t)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "metadata:\n  id: did:nuwa:cap:%s@%s\n  name: %q\n  description: %q\n", s.Name, s.Version, s.Title, s.Description)
	if len(s.Keywords) > 0 {
		b.WriteString("  triggers:\n")
		for _, k := range s.Keywords {
			fmt.Fprintf(&b, "    - {type: keyword, value: %q}\n", k)
		}
	}
	fmt.Fprintf(&b, "  memory_scope: sc:%s\n  permissions:\n    require: [%s]\n", s.Name, quoteAll(s.Permissions))
	if s.State == "" {
		s.State = "did:nuwa:state:" + s.Name + "#v1"
	}
	fmt.Fprintf(&b, "schema: |\n  {\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":%q,\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}\n", s.State)
	fmt.Fprintf(&b, "prompt: |\n  You are the %s assistant.\ntools:\n", s.Title)
	for _, t := range s.Tools {
		fmt.Fprintf(&b, "  - type: function\n    function:\n      name: %s\n      description: %q\n", t, "The "+t+" tool of "+s.Name+".")
		if strings.HasPrefix(t, "state.") {
			fmt.Fprintf(&b, "      parameters:\n        type: object\n        properties:\n          schema_uri: {type: string}\n          object: {$ref: \"#/schema\"}\n        required: [schema_uri, object]\n")
		} else {
			b.WriteString("      parameters:\n        type: object\n        properties:\n          text: {type: string}\n        required: [text]\n")
		}
	}
	if bindings := nonBuiltin(s.Tools); len(bindings) > 0 {
		b.WriteString("tool_bindings:\n")
		for _, t := range bindings {
			fmt.Fprintf(&b, "  %q:\n    type: http_post\n    url: \"https://example.org/%s\"\n", t, t)
		}
	}
	return []byte(b.String())
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func nonBuiltin(tools []string) []string {
	var out []string
	for _, t := range tools {
		if !acp.IsBuiltin(t) {
			out = append(out, t)
		}
	}
	return out
}

// File is s's package file, signed by s.FileSigner or else by sk
// (unless s.Unsigned).
func File(s Spec, sk string) ([]byte, error) {
	raw := s.YAML()
	if s.Unsigned {
		return raw, nil
	}
	if s.FileSigner != "" {
		sk = s.FileSigner
	}
	return acp.SignAs(raw, sk, acp.SigFormNostr)
}

// Event returns the signed kind-30199 event of s by sk at createdAt; its
// file is signed as File says.
func Event(s Spec, sk string, createdAt int64) (*nostr.Event, error) {
	raw, err := File(s, sk)
	if err != nil {
		return nil, fmt.Errorf("registrytest: sign %s: %w", s.Name, err)
	}
	p, err := acp.Parse(raw, acp.Options{})
	if err != nil {
		return nil, fmt.Errorf("registrytest: %s: %w", s.Name, err)
	}
	evt := acp.EventTemplate(p)
	evt.CreatedAt = nostr.Timestamp(createdAt)
	if err := evt.Sign(sk); err != nil {
		return nil, err
	}
	return &evt, nil
}

// Publish signs s by sk at createdAt and stores it in rel.
func Publish(t testing.TB, rel *relay.Relay, sk string, s Spec, createdAt int64) *nostr.Event {
	t.Helper()
	evt, err := Event(s, sk, createdAt)
	if err != nil {
		t.Fatal(err)
	}
	if err := rel.Publish(context.Background(), evt); err != nil {
		t.Fatalf("publish %s@%s: %v", s.Name, s.Version, err)
	}
	return evt
}

// OpenRelay opens a relay in t's temp dir, closed when t ends.
func OpenRelay(t testing.TB) *relay.Relay {
	t.Helper()
	return OpenRelayAt(t, t.TempDir())
}

// OpenRelayAt opens a relay over dir, closed when t ends.
func OpenRelayAt(t testing.TB, dir string) *relay.Relay {
	t.Helper()
	rel, err := relay.Open(context.Background(), relay.Config{DataDir: dir, Version: "test",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rel.Close(ctx)
	})
	return rel
}

// Key returns a fresh secret key and its public key.
func Key(t testing.TB) (sk, pk string) {
	t.Helper()
	sk = nostr.GeneratePrivateKey()
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	return sk, pk
}
