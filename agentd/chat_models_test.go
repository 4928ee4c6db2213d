package agentd_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
	"github.com/agentnode/agentnode/capabilities/router"
)

// notePackageNeeding is the note package with llm_requirements.
func notePackageNeeding(t *testing.T, req string) []byte {
	raw := string(notePackage(t, "1.0.0", "http://example.org/"))
	return []byte(strings.Replace(raw, "  memory_scope: sc:note\n", "  memory_scope: sc:note\n  llm_requirements:\n"+req, 1))
}

// The scripted model sees, as each request's model, the configured model
// the capability's llm_requirements chose; the default model answers the
// agent's own prompt.
func TestDaemon_Chat_LLMRequirementsChooseTheModel(t *testing.T) {
	srv := llmtest.NewServer(t, answer("Noted."), answer("Hello."))
	models := []router.Model{{Name: "small-8k", ContextWindow: 8192}, {Name: "big-128k", ContextWindow: 128000}}
	cn := openCapsNode(t, agentd.Config{Model: model(t, srv), Models: models})
	cn.installFile(sign(t, notePackageNeeding(t, "    min_context_window: 16000\n"), cn.author.SK))

	reply, err := cn.d.Chat(context.Background(), cn.agent.Npub, "c1", "add a note: buy milk")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Capability != noteID || reply.Model != "big-128k" {
		t.Fatalf("reply = %+v", reply)
	}
	if _, err := cn.d.Chat(context.Background(), cn.agent.Npub, "c2", "hello"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Model != "big-128k" || reqs[1].Model != "scripted" {
		t.Fatalf("request models: %d requests, %v", len(reqs), modelsOf(reqs))
	}
}

// No configured model fits: the capability is refused with the reason,
// and no model is called.
func TestDaemon_Chat_LLMRequirementsRefuse(t *testing.T) {
	srv := llmtest.NewServer(t)
	models := []router.Model{{Name: "small-8k", ContextWindow: 8192, Features: []string{"tool_use"}}}
	cn := openCapsNode(t, agentd.Config{Model: model(t, srv), Models: models})
	cn.installFile(sign(t, notePackageNeeding(t, "    required_features: [vision]\n"), cn.author.SK))

	reply, err := cn.d.Chat(context.Background(), cn.agent.Npub, "c1", "add a note: buy milk")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Reason != router.ReasonNoModel || reply.Capability != "" || !strings.Contains(reply.Answer, `small-8k: lacks feature "vision"`) {
		t.Fatalf("reply = %+v", reply)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
}

func modelsOf(reqs []llmtest.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Model)
	}
	return out
}
