package contextvm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/agentd/contextvm"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/internal/testkit"
)

// An mcp_service binding whose service_uri is nostr:<nprofile> calls the
// ContextVM server natively, and its tool's output schema comes from the
// server's tools/list.
func TestBinding_NostrServiceURI(t *testing.T) {
	f := startFixture(t, contextvm.ServerConfig{})
	caller := nostr.GeneratePrivateKey()
	r := bindings.New(bindings.Config{Nostr: func(uri string) (mcp.Transport, error) {
		server, relays, err := contextvm.ParseServerURI(uri)
		if err != nil {
			return nil, err
		}
		return &contextvm.ClientTransport{Relays: relays, SecretKey: caller, Server: server, Network: allowLoopback}, nil
	}})
	t.Cleanup(func() { r.Close() })
	nprofile, err := nip19.EncodeProfile(f.agent.PK, []string{f.url})
	if err != nil {
		t.Fatal(err)
	}
	b := acp.Binding{Type: acp.BindMCPService, ServiceURI: "nostr:" + nprofile, MCPAction: "echo"}
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	out, err := r.Call(ctx, bindings.Call{Agent: "aa", Tool: "echo", Binding: b, Args: json.RawMessage(`{"text":"over nostr"}`)})
	if err != nil || string(out) != `{"echo":"over nostr"}` {
		t.Fatalf("call = %s, %v", out, err)
	}
	schema, err := r.MCPOutputSchema(ctx, b.ServiceURI, "echo")
	if err != nil || !strings.Contains(string(schema), `"echo"`) {
		t.Fatalf("output schema = %s, %v", schema, err)
	}
	bad := b
	bad.ServiceURI = "nostr:note1xyz"
	if _, err := r.Call(ctx, bindings.Call{Agent: "aa", Tool: "echo", Binding: bad, Args: json.RawMessage(`{}`)}); err == nil {
		t.Fatal("a nostr: URI that names no server was called")
	}
}

func TestParseServerURI(t *testing.T) {
	pk := testkit.NewKey(t).PK
	npub, _ := nip19.EncodePublicKey(pk)
	nprofile, _ := nip19.EncodeProfile(pk, []string{"wss://relay.example"})
	for _, uri := range []string{"nostr:" + npub, npub, pk, "nostr:" + nprofile} {
		got, relays, err := contextvm.ParseServerURI(uri)
		if err != nil || got != pk {
			t.Fatalf("%s: %s %v", uri, got, err)
		}
		if strings.Contains(uri, "nprofile") != (len(relays) == 1) {
			t.Fatalf("%s: relays %v", uri, relays)
		}
	}
	if _, _, err := contextvm.ParseServerURI("nostr:nsec1abc"); err == nil {
		t.Fatal("an nsec was taken for a server")
	}
}

// A service_uri comes from a published package: malformed NIP-19 data is
// ErrBadServerURI, never a panic (go-nostr's decoder panics on an naddr whose
// kind field is shorter than four bytes).
func TestParseServerURI_malformed(t *testing.T) {
	for _, uri := range []string{
		"naddr1qqqqxqgpwyvqvv",
		"nostr:naddr1qqqqxqgpwyvqvv",
		" nostr:naddr1qqqqxqgpwyvqvv ",
		"nostr:",
		"npub1",
		"nprofile1qqqqqqqq",
	} {
		if _, _, err := contextvm.ParseServerURI(uri); !errors.Is(err, contextvm.ErrBadServerURI) {
			t.Errorf("ParseServerURI(%q) = %v, want ErrBadServerURI", uri, err)
		}
	}
}
