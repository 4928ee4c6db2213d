package agentd_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
	"github.com/agentnode/agentnode/internal/testkit"
)

func TestDaemon_CapSource(t *testing.T) {
	srv := llmtest.NewServer(t, createNote("from a skill"), answer("Done."))
	cn := openCapsNode(t, agentd.Config{Model: model(t, srv)})
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))
	host := cap.NewHost(cn.d.CapSource(), cap.Options{})
	ctx := context.Background()
	agent := cn.agent.Agent.PubKey

	list, err := host.List(ctx, agent)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range list {
		ids = append(ids, m.Kind+" "+m.CapabilityID+"@"+m.Version)
	}
	want := []string{"skill did:nuwa:cap:note@1.0.0", "tool did:nuwa:cap:note/state.create@1.0.0",
		"tool did:nuwa:cap:note/state.query@1.0.0", "tool did:nuwa:cap:note/fetch_web_content@1.0.0"}
	if !slices.Equal(ids, want) {
		t.Fatalf("manifests = %q, want %q", ids, want)
	}

	create := cap.Ref{CapabilityID: "did:nuwa:cap:note/state.create", Version: "1.0.0"}
	res := host.Invoke(ctx, agent, create, json.RawMessage(`{"schema_uri":"`+noteURI+`","object":`+noteObject("from a tool")+`}`))
	if !res.OK {
		t.Fatalf("invoke state.create: %+v", res.Error)
	}
	res = host.Invoke(ctx, agent, create, json.RawMessage(`{"schema_uri":"`+noteURI+`","object":{"title":"no id"}}`))
	if res.OK || res.Error.Code != capabilities.CodeInvalidInput {
		t.Fatalf("invoke with an invalid note: %+v", res)
	}

	skill := cap.Ref{CapabilityID: "did:nuwa:cap:note", Version: "1.0.0"}
	res = host.Invoke(ctx, agent, skill, json.RawMessage(`{"message":"note: from a skill"}`))
	if !res.OK || !strings.Contains(string(res.Output), `"answer":"Done."`) {
		t.Fatalf("invoke the skill: %s, %+v", res.Output, res.Error)
	}
	if got := cn.notes(t); !slices.Equal(got, []string{"from a tool", "from a skill"}) && !slices.Equal(got, []string{"from a skill", "from a tool"}) {
		t.Fatalf("notes = %v", got)
	}

	cn.denyNudge("state.create")
	res = host.Invoke(ctx, agent, create, json.RawMessage(`{"schema_uri":"`+noteURI+`","object":`+noteObject("denied")+`}`))
	if res.OK || res.Error.Code != capabilities.CodePermissionDenied {
		t.Fatalf("invoke a denied tool: %+v", res)
	}
	if _, err := host.List(ctx, testkit.NewKey(t).PK); capabilities.CodeOf(err) != capabilities.CodeNotFound {
		t.Fatalf("list of an unknown agent: %v", err)
	}
}

func TestDaemon_CapSource_SkillWithoutModel(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))
	host := cap.NewHost(cn.d.CapSource(), cap.Options{})
	res := host.Invoke(context.Background(), cn.agent.Agent.PubKey, cap.Ref{CapabilityID: "did:nuwa:cap:note", Version: "1.0.0"}, json.RawMessage(`{"message":"hi"}`))
	if res.OK || res.Error.Code != capabilities.CodeExecutionFailed || !strings.Contains(res.Error.Message, "model") {
		t.Fatalf("skill without a model: %+v", res.Error)
	}
}
