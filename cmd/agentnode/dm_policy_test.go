package main

import (
	"context"
	"errors"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/internal/testkit"
)

// The "dm" policy decides who gets an answer: under "owner" a stranger's
// DM is dropped silently (dm.ErrNoAnswer) while the owner's reaches the
// agent's chat (here: no model configured); a revoked agent answers nobody
// and runs no tool.
func TestServe_DMPolicyOwner(t *testing.T) {
	cfg := configFile(t, map[string]any{"dm": map[string]any{"from": "owner"}})
	n := startEndpointNode(t, "Private", "--config", cfg)
	ctx := context.Background()
	stranger := testkit.NewKey(t).PK
	agent, owner := n.agentPK(), n.agent.Agent.Owner

	if _, err := n.respondDM(ctx, agent, stranger, "hello"); !errors.Is(err, dm.ErrNoAnswer) {
		t.Fatalf("a stranger's DM: err = %v, want dm.ErrNoAnswer", err)
	}
	if _, err := n.respondDM(ctx, agent, owner, "hello"); !errors.Is(err, llm.ErrNoModel) {
		t.Fatalf("the owner's DM: err = %v, want it to reach chat (llm.ErrNoModel here)", err)
	}
	if _, err := n.acp.consent.Revoke(ctx, agent, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.respondDM(ctx, agent, owner, "hello"); !errors.Is(err, dm.ErrNoAnswer) {
		t.Fatalf("a revoked agent's DM from its owner: err = %v, want dm.ErrNoAnswer", err)
	}
	if _, err := n.chatAnswer(ctx, agent, "c", "hello"); !errors.Is(err, agentd.ErrRevoked) {
		t.Fatalf("chat with a revoked agent: err = %v, want agentd.ErrRevoked", err)
	}
	if _, _, err := n.Daemon().Tools(ctx, agent, ""); !errors.Is(err, agentd.ErrRevoked) {
		t.Fatalf("a revoked agent's tools (kind 25910, CAP): err = %v, want agentd.ErrRevoked", err)
	}
}
