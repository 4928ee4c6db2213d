package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/internal/testkit"
)

// TestServeConfig_NodeSection: the "node" section's operator fields reach
// NIP-11; a bad public_url or pubkey and an unknown key are refused.
func TestServeConfig_NodeSection(t *testing.T) {
	pk := testkit.NewKey(t).PK
	cfg := configFile(t, map[string]any{"node": map[string]string{"name": "agents.example", "description": "ours",
		"pubkey": npub(pk), "contact": "mailto:ops@example.org", "public_url": "wss://agents.example"}})
	n := waitServing(t, startServe(t, "--config", cfg))
	if got := n.dmRelayURLs("ws://" + n.Addr()); len(got) != 1 || got[0] != "wss://agents.example" {
		t.Errorf("DM relay list names %q, want the public URL", got)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+n.Addr()+"/", nil)
	req.Header.Set("Accept", "application/nostr+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct{ Name, Description, PubKey, Contact string }
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Name != "agents.example" || doc.Description != "ours" || doc.PubKey != pk || doc.Contact != "mailto:ops@example.org" {
		t.Errorf("NIP-11 = %+v", doc)
	}
	for body, want := range map[string]string{
		`{"node": {"public_url": "http://x"}}`: `"node.public_url"`,
		`{"node": {"pubkey": "nope"}}`:         `"node.pubkey"`,
		`{"node": {"bogus": 1}}`:               `unknown key "bogus"`,
	} {
		if err := parseServeFile([]byte(body), &serveFile{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %s", body, err, want)
		}
	}
}
