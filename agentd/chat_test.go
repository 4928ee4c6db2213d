package agentd_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
)

// model returns a client of the scripted server.
func model(t *testing.T, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createNote is a scripted model turn that calls state.create (by its wire
// alias) with a note titled title.
func createNote(title string) llmtest.Step {
	return func(llmtest.Request) llmtest.Reply {
		args := `{"schema_uri":"` + noteURI + `","object":` + noteObject(title) + `}`
		return llmtest.Call(llmtest.ToolCall("call_1", "state_create", args))
	}
}

func answer(text string) llmtest.Step {
	return func(llmtest.Request) llmtest.Reply { return llmtest.Answer(text) }
}

// conversation returns the agent's ConversationLog entries as role: content.
func (cn *capsNode) conversation(t *testing.T) []string {
	t.Helper()
	c := state.Caller{Agent: cn.agent.Agent.PubKey, Owner: cn.owner.PK, Verbs: []string{state.VerbQuery}}
	doc, err := cn.rt.Get(context.Background(), c, schema.ConversationLogURI, state.CoreID(c))
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Entries []struct{ Role, Content string }
	}
	if err := json.Unmarshal(doc.Object, &log); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range log.Entries {
		out = append(out, e.Role+": "+e.Content)
	}
	return out
}

func TestDaemon_Chat_CapabilityWritesState(t *testing.T) {
	srv := llmtest.NewServer(t, createNote("milk"), answer("Noted: milk."))
	cn := openCapsNode(t, agentd.Config{Model: model(t, srv)})
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))

	reply, err := cn.d.Chat(context.Background(), cn.agent.Npub, "c1", "add a note: buy milk")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Answer != "Noted: milk." || reply.Capability != noteID || !strings.HasPrefix(reply.Reason, "trigger:") || reply.Steps != 2 {
		t.Fatalf("reply = %+v", reply)
	}
	if len(reply.ToolCalls) != 1 || reply.ToolCalls[0].Name != "state.create" || reply.ToolCalls[0].ErrorCode != "" {
		t.Fatalf("tool calls = %+v", reply.ToolCalls)
	}
	if got := cn.notes(t); !slices.Equal(got, []string{"milk"}) {
		t.Fatalf("notes = %v, want [milk]", got)
	}
	want := []string{"user: add a note: buy milk", "assistant: Noted: milk."}
	if got := cn.conversation(t); !slices.Equal(got, want) {
		t.Fatalf("conversation log = %q, want %q", got, want)
	}

	reqs := srv.Requests()
	first := reqs[0]
	if !strings.Contains(*first.Messages[0].Content, "Note Assistant") || first.Messages[0].Role != "system" {
		t.Errorf("system prompt is not the capability's: %+v", first.Messages[0])
	}
	if got := first.ToolNames(); !slices.Contains(got, "state_create") || !slices.Contains(got, "fetch_web_content") {
		t.Errorf("offered tools = %v", got)
	}
	if last := reqs[1].Last(); last.Role != "tool" || last.ToolCallID != "call_1" || !strings.Contains(*last.Content, "milk") {
		t.Errorf("the tool result sent back = %+v", last)
	}
}

func TestDaemon_Chat_NudgeDeniesTool(t *testing.T) {
	srv := llmtest.NewServer(t, createNote("denied"), answer("I could not save it."))
	cn := openCapsNode(t, agentd.Config{Model: model(t, srv)})
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))
	cn.denyNudge("state.create")

	reply, err := cn.d.Chat(context.Background(), cn.agent.Npub, "c1", "add a note: denied")
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.ToolCalls) != 1 || reply.ToolCalls[0].ErrorCode == "" {
		t.Fatalf("the denied call was not refused: %+v", reply.ToolCalls)
	}
	if got := cn.notes(t); len(got) != 0 {
		t.Fatalf("a denied tool wrote %v", got)
	}
	if got := srv.Requests()[0].ToolNames(); slices.Contains(got, "state_create") {
		t.Errorf("a denied tool was offered to the model: %v", got)
	}
}

func TestDaemon_Chat_Fallback(t *testing.T) {
	srv := llmtest.NewServer(t, answer("Hello from the agent."))
	cn := openCapsNode(t, agentd.Config{Model: model(t, srv)})
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))

	reply, err := cn.d.Chat(context.Background(), cn.agent.Npub, "", "hello there")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Capability != "" || reply.Reason != "fallback" || reply.Conversation != agentd.DefaultConversation {
		t.Fatalf("reply = %+v", reply)
	}
	req := srv.Requests()[0]
	if !strings.Contains(*req.Messages[0].Content, "You review Go code.") {
		t.Errorf("fallback system prompt is not the agent's effective prompt: %q", *req.Messages[0].Content)
	}
	if got := req.ToolNames(); !slices.Equal(got, []string{"lesson_learn"}) {
		t.Errorf("fallback tools = %v, want the agent's own [lesson_learn]", got)
	}
}

func TestDaemon_Chat_StackAndHistory(t *testing.T) {
	srv := llmtest.NewServer(t, answer("first"), answer("second"))
	cn := openCapsNode(t, agentd.Config{Model: model(t, srv)})
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))
	ctx := context.Background()

	if r, err := cn.d.Chat(ctx, cn.agent.Npub, "c1", "/switch note"); err != nil || r.Capability != noteID || r.Steps != 0 || r.Answer == "" {
		t.Fatalf("/switch note: %+v, %v", r, err)
	}
	if r, err := cn.d.Chat(ctx, cn.agent.Npub, "c1", "something unrelated"); err != nil || r.Capability != noteID || r.Reason != "stack" {
		t.Fatalf("the stack does not keep the conversation: %+v, %v", r, err)
	}
	if r, err := cn.d.Chat(ctx, cn.agent.Npub, "c1", "and more"); err != nil || r.Answer != "second" {
		t.Fatalf("second turn: %+v, %v", r, err)
	}
	msgs := srv.Requests()[1].Messages
	var contents []string
	for _, m := range msgs[1:] {
		contents = append(contents, m.Role+": "+*m.Content)
	}
	if want := []string{"user: something unrelated", "assistant: first", "user: and more"}; !slices.Equal(contents, want) {
		t.Fatalf("second turn's messages = %q, want %q", contents, want)
	}
	if r, err := cn.d.Chat(ctx, cn.agent.Npub, "c1", "/back"); err != nil || r.Capability != "" || r.Steps != 0 {
		t.Fatalf("/back: %+v, %v", r, err)
	}
}

func TestDaemon_Chat_NoModel(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	_, err := cn.d.Chat(context.Background(), cn.agent.Npub, "c1", "hello")
	if !errors.Is(err, llm.ErrNoModel) || !strings.Contains(err.Error(), llm.EnvModel) || !strings.Contains(err.Error(), llm.EnvBaseURL) {
		t.Fatalf("err = %v, want llm.ErrNoModel naming the variables", err)
	}
	// A router command needs no model.
	if r, err := cn.d.Chat(context.Background(), cn.agent.Npub, "c1", "/back"); err != nil || r.Answer == "" {
		t.Fatalf("/back without a model: %+v, %v", r, err)
	}
}

func TestClient_ChatAndCaps(t *testing.T) {
	srv := llmtest.NewServer(t, createNote("over http"), answer("Saved."))
	cn := openCapsNode(t, agentd.Config{Model: model(t, srv)})
	api := serve(t, cn.node)
	token, _ := agentd.ReadToken(cn.dir)
	c := &agentd.Client{BaseURL: api.URL, Token: token}
	anon := &agentd.Client{BaseURL: api.URL}
	ctx := context.Background()
	raw := string(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))

	if _, err := anon.InstallCap(ctx, cn.agent.Npub, agentd.CapInstallRequest{YAML: raw}); !errors.Is(err, agentd.ErrUnauthorized) {
		t.Fatalf("install without the token: %v", err)
	}
	if _, err := c.InstallCap(ctx, cn.agent.Npub, agentd.CapInstallRequest{YAML: raw[:len(raw)-2] + "x\n"}); !errors.Is(err, agentd.ErrCapRefused) {
		t.Fatalf("tampered over HTTP: %v", err)
	}
	if ch, err := c.InstallCap(ctx, cn.agent.Npub, agentd.CapInstallRequest{YAML: raw}); err != nil || !ch.Changed {
		t.Fatalf("install: %+v, %v", ch, err)
	}
	if list, err := anon.Caps(ctx, "Notes Agent"); err != nil || len(list) != 1 {
		t.Fatalf("caps: %+v, %v", list, err)
	}
	if _, err := anon.Chat(ctx, cn.agent.Npub, "h", "note this"); !errors.Is(err, agentd.ErrUnauthorized) {
		t.Fatalf("chat without the token: %v", err)
	}
	reply, err := c.Chat(ctx, cn.agent.Npub, "h", "add a note over http")
	if err != nil || reply.Answer != "Saved." || reply.Capability != noteID {
		t.Fatalf("chat: %+v, %v", reply, err)
	}
	if _, err := c.UpgradeCap(ctx, cn.agent.Npub, noteID, agentd.CapUpgradeRequest{To: "9.9.9"}); !errors.Is(err, agentd.ErrCapNotFound) {
		t.Fatalf("upgrade to a version nobody published: %v", err)
	}
	if ch, err := c.RemoveCap(ctx, cn.agent.Npub, noteID); err != nil || !ch.Changed {
		t.Fatalf("remove: %+v, %v", ch, err)
	}
}

func TestDaemon_Chat_ModelFails(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Reply { return llmtest.Error(400, "context length exceeded") })
	cn := openCapsNode(t, agentd.Config{Model: model(t, srv)})
	_, err := cn.d.Chat(context.Background(), cn.agent.Npub, "c1", "hello")
	if !errors.Is(err, agentd.ErrModelFailed) || !strings.Contains(err.Error(), "context length exceeded") {
		t.Fatalf("err = %v, want ErrModelFailed with the provider's message", err)
	}
	if got := cn.conversation(t); len(got) != 0 {
		t.Fatalf("a failed turn was logged: %q", got)
	}
}

func TestDaemon_Chat_Concurrent(t *testing.T) {
	srv := llmtest.NewServer(t).Always(answer("ok"))
	cn := openCapsNode(t, agentd.Config{Model: model(t, srv)})
	raw := sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK)
	cn.installFile(raw)
	ctx := context.Background()
	errs := make(chan error, 64)
	done := make(chan struct{})
	go func() { // install and remove while conversations run
		defer close(done)
		for range 5 {
			if _, err := cn.d.RemoveCap(ctx, cn.agent.Npub, "note"); err != nil {
				errs <- err
			}
			if _, err := cn.d.InstallCap(ctx, cn.agent.Npub, agentd.CapInstallRequest{YAML: string(raw)}); err != nil {
				errs <- err
			}
		}
	}()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conv := fmt.Sprintf("c%d", i)
			for range 5 {
				r, err := cn.d.Chat(ctx, cn.agent.Npub, conv, "a note please")
				if err != nil && !errors.Is(err, agentd.ErrCapNotInstalled) { // removed between routing and the turn
					errs <- err
				} else if err == nil && r.Answer != "ok" {
					errs <- fmt.Errorf("answer %q", r.Answer)
				}
			}
		}()
	}
	wg.Wait()
	<-done
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(cn.conversation(t)); got%2 != 0 || got == 0 {
		t.Fatalf("conversation log has %d entries, want pairs", got)
	}
}
