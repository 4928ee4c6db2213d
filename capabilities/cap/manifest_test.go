package cap_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/cap"
)

func TestManifestsFor(t *testing.T) {
	ms := cap.ManifestsFor(notePackage())
	if len(ms) != 3 {
		t.Fatalf("got %d manifests, want skill + 2 tools", len(ms))
	}
	skill := ms[0]
	if skill.CapabilityID != "did:nuwa:cap:note" || skill.Version != "1.2.0" || skill.Kind != cap.KindSkill || skill.Name != "Note" {
		t.Errorf("skill identity: %+v", skill)
	}
	if skill.PromptTemplate == nil || *skill.PromptTemplate != "You are Note Assistant." {
		t.Errorf("skill prompt_template: %v", skill.PromptTemplate)
	}
	if !slices.Equal(skill.RequiredPermissions, []string{"state.create"}) {
		t.Errorf("skill required_permissions: %v", skill.RequiredPermissions)
	}
	if len(skill.Resources) != 1 || skill.Resources[0].URI != "did:nuwa:state:note#v1" {
		t.Errorf("skill resources: %+v", skill.Resources)
	}
	create := ms[1]
	if create.CapabilityID != "did:nuwa:cap:note/state.create" || create.Version != "1.2.0" || create.Kind != cap.KindTool {
		t.Errorf("tool identity: %+v", create)
	}
	if strings.Contains(string(create.InputSchema), "#/schema") || strings.Contains(string(create.InputSchema), "did:nuwa:state") {
		t.Errorf("tool input_schema still refers to the package schema: %s", create.InputSchema)
	}
}

// The mapped manifests work end to end: the skill takes {message}, and the
// state.create tool validates its object against the package schema.
func TestManifestsFor_invoke(t *testing.T) {
	src := &toolSource{agent: agentA}
	echo := func(_ context.Context, in json.RawMessage) (json.RawMessage, error) { return in, nil }
	for _, m := range cap.ManifestsFor(notePackage()) {
		src.add(m, echo)
	}
	host := cap.NewHost(src, cap.Options{})
	ctx := context.Background()
	create := cap.Ref{CapabilityID: "did:nuwa:cap:note/state.create", Version: "1.2.0"}
	ok := host.Invoke(ctx, agentA, create, json.RawMessage(`{"schema_uri":"did:nuwa:state:note#v1","object":{"title":"t","body":"b"}}`))
	if !ok.OK {
		t.Fatalf("valid note: %+v", ok.Error)
	}
	bad := host.Invoke(ctx, agentA, create, json.RawMessage(`{"schema_uri":"did:nuwa:state:note#v1","object":{"title":"t"}}`))
	if bad.OK || bad.Error.Code != capabilities.CodeInvalidInput || !strings.Contains(bad.Error.Message, "body") {
		t.Fatalf("note without body: got %+v, want INVALID_INPUT naming body", bad.Error)
	}
	skill := cap.Ref{CapabilityID: "did:nuwa:cap:note", Version: "1.2.0"}
	if res := host.Invoke(ctx, agentA, skill, json.RawMessage(`{"message":"note this"}`)); !res.OK {
		t.Fatalf("skill: %+v", res.Error)
	}
	if res := host.Invoke(ctx, agentA, skill, json.RawMessage(`{"text":"note this"}`)); res.OK {
		t.Fatal("skill accepted input without message")
	}
}
