package state_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/schema"
)

func TestCoreModels_FirstUse(t *testing.T) {
	ctx := context.Background()
	rt := openRuntime(t, "", state.Options{})
	c := state.Caller{Agent: agentA1, Owner: owner1, Scope: "sc:chat", Verbs: []string{state.VerbQuery, state.VerbUpdate}}
	for _, uri := range schema.CoreURIs {
		res := must[*state.QueryResult](t)(rt.Query(ctx, c, []byte(fmt.Sprintf(`{"from":%q}`, uri))))
		if len(res.Rows) != 1 || res.Rows[0]["id"] != agentA1 {
			t.Fatalf("%s: %v", uri, res.Rows)
		}
	}
	settings := must[*state.Document](t)(rt.Get(ctx, c, schema.AgentSettingsURI, state.CoreID(c)))
	if object(t, settings)["language"] != "en" || settings.Visibility != "private" || settings.Scope != state.CoreScope {
		t.Fatalf("settings %+v %s", settings, settings.Object)
	}
	must[*state.Document](t)(rt.AppendConversation(ctx, c, state.RoleUser, "hello"))
	d := must[*state.Document](t)(rt.AppendConversation(ctx, c, state.RoleAssistant, "hi there"))
	entries := object(t, d)["entries"].([]any)
	if len(entries) != 2 || entries[0].(map[string]any)["content"] != "hello" || entries[1].(map[string]any)["role"] != "assistant" {
		t.Fatalf("entries %v", entries)
	}
	_, err := rt.AppendConversation(ctx, c, "system", "nope")
	wantCode(t, err, state.CodeInvalidInput)
	d = must[*state.Document](t)(rt.Update(ctx, c, schema.AgentSettingsURI, state.CoreID(c), []byte(`{"$set":{"tone":"formal"}}`)))
	if object(t, d)["tone"] != "formal" {
		t.Fatalf("settings %s", d.Object)
	}
	_, err = rt.Update(ctx, c, schema.AgentSettingsURI, state.CoreID(c), []byte(`{"$set":{"language":"klingon"}}`))
	wantCode(t, err, state.CodeInvalidInput)
	d = must[*state.Document](t)(rt.Update(ctx, c, schema.MemoryStoreURI, state.CoreID(c),
		[]byte(`[{"op":"add","path":"/items/m1","value":{"value":"likes tea","importance":0.7,"createdAt":"2025-05-15T10:00:00Z"}}]`)))
	if js(object(t, d)["items"]) != `{"m1":{"createdAt":"2025-05-15T10:00:00Z","importance":0.7,"value":"likes tea"}}` {
		t.Fatalf("memory %s", d.Object)
	}
	all := state.Caller{Agent: agentA1, Owner: owner1, Verbs: state.AllVerbs}
	_, err = rt.Create(ctx, all, schema.AgentSettingsURI, []byte(`{"language":"en"}`))
	wantCode(t, err, state.CodeInvalidInput)
	wantCode(t, rt.Delete(ctx, all, schema.ConversationLogURI, agentA1, "hard"), state.CodePermissionDenied)
	// The owner reads its agents' core models; a sibling agent does not.
	owner := state.Caller{Owner: owner1, Verbs: state.AllVerbs}
	must[*state.Document](t)(rt.Get(ctx, owner, schema.ConversationLogURI, agentA1))
	sib := state.Caller{Agent: agentA2, Owner: owner1, Verbs: state.AllVerbs}
	_, err = rt.Get(ctx, sib, schema.ConversationLogURI, agentA1)
	wantCode(t, err, state.CodeNotFound)
	must[*state.Document](t)(rt.Get(ctx, sib, schema.ConversationLogURI, agentA2))
}
