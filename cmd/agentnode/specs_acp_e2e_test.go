package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd"
)

// TestSpecACPRegistrationsDurable_E2E: a registration in the Agent Context
// Protocol's own form (section 3.1's example verbatim, from the
// conformance transcript) survives a restart of the node: its heartbeat
// (section 3.4) after the restart is ok, and it is still listed unverified.
func TestSpecACPRegistrationsDurable_E2E(t *testing.T) {
	var transcript struct {
		Request struct {
			Params json.RawMessage `json:"params"`
		} `json:"request"`
	}
	if err := json.Unmarshal(mustReadFile(t, "../../agentd/agentrpc/testdata/conformance/620-register-spec-form.json"), &transcript); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first := waitServing(t, startServe(t, "--data", dir))
	token, err := agentd.ReadToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	acpURL := func(n *servedNode) string { return "http://" + n.Addr() + "/acp" }
	var reg struct {
		Agent struct {
			ID         string `json:"id"`
			Unverified string `json:"unverified"`
		} `json:"agent"`
	}
	mustResult(t, "agent/register", rpcPost(t, acpURL(first), token, "agent/register", transcript.Request.Params), &reg)
	if reg.Agent.ID != "unique-agent-id" || reg.Agent.Unverified == "" {
		t.Fatalf("register = %+v", reg)
	}
	first.stop()

	second := waitServing(t, startServe(t, "--data", dir))
	var beat map[string]any
	mustResult(t, "agent/heartbeat after a restart", rpcPost(t, acpURL(second), token, "agent/heartbeat",
		map[string]any{"agentId": "unique-agent-id", "status": "active"}), &beat)
	if beat["status"] != "ok" || !strings.Contains(beat["unverified"].(string), "Agent Context Protocol") {
		t.Fatalf("heartbeat after a restart = %v", beat)
	}
}
