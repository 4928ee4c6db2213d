package agentd_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/requester"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/internal/testkit"
)

// callNote runs a note tool of the agent with ctx (and its requester).
func (cn *capsNode) callNote(ctx context.Context, t *testing.T, tool, args string) (string, error) {
	t.Helper()
	tools, _, err := cn.d.Tools(ctx, cn.agent.Npub, noteID)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tools.CallTool(ctx, tool, []byte(args))
	return string(out), err
}

func TestDaemon_Tools_Requester(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/fetch"), cn.author.SK))
	ctx := context.Background()
	create := func(title string) string {
		return `{"schema_uri":"` + noteURI + `","object":` + noteObject(title) + `}`
	}
	query := `{"from":"` + noteURI + `"}`
	if _, err := cn.callNote(ctx, t, "state.create", create("the agent's own")); err != nil {
		t.Fatal(err)
	}
	// The owner and the agent itself asking are not requesters.
	for _, who := range []string{cn.owner.PK, cn.agent.Agent.PubKey} {
		if out, err := cn.callNote(requester.With(ctx, who), t, "state.query", query); err != nil || !strings.Contains(out, "the agent's own") {
			t.Errorf("asked by %s: %s, %v", who, out, err)
		}
	}
	stranger := requester.With(ctx, testkit.NewKey(t).PK)
	if out, err := cn.callNote(stranger, t, "state.query", query); err != nil || strings.Contains(out, "the agent's own") {
		t.Errorf("a stranger's query: %s, %v", out, err)
	}
	_, err := cn.callNote(stranger, t, "state.create", create("stranger's"))
	var ce *capabilities.Error
	if !errors.As(err, &ce) || ce.Code != capabilities.CodePermissionDenied {
		t.Fatalf("a stranger's create: %v, want PERMISSION_DENIED", err)
	}
	if slices.Contains(cn.notes(t), "stranger's") {
		t.Fatal("the refused write is in the owner's view")
	}

	a, err := cn.d.SetStateAccess(ctx, cn.agent.Npub, agentd.StateAccessRequest{Schema: noteURI, Access: agentd.AccessWrite, Open: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []state.Grant{{Schema: noteURI, Write: true}}; !slices.Equal(a.StateOpen, want) {
		t.Fatalf("StateOpen = %+v, want %+v", a.StateOpen, want)
	}
	if _, err := cn.callNote(stranger, t, "state.create", create("stranger's")); err != nil {
		t.Fatalf("a stranger's create once opened: %v", err)
	}
	if !slices.Contains(cn.notes(t), "stranger's") {
		t.Error("the owner does not see the opened write")
	}
	if out, _ := cn.callNote(requester.With(ctx, testkit.NewKey(t).PK), t, "state.query", query); strings.Contains(out, "stranger's") {
		t.Errorf("another stranger reads the first one's note: %s", out)
	}
	a, err = cn.d.SetStateAccess(ctx, cn.agent.Npub, agentd.StateAccessRequest{Schema: noteURI, Access: agentd.AccessWrite})
	if err != nil || len(a.StateOpen) != 0 {
		t.Fatalf("closed: %+v, %v", a.StateOpen, err)
	}
}

func TestDaemon_SetStateAccess_refusals(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	ctx := context.Background()
	for _, req := range []agentd.StateAccessRequest{
		{Schema: noteURI, Access: "admin", Open: true},
		{Schema: noteURI, Access: agentd.AccessRead, Open: true}, // no capability declares it yet
		{Schema: "", Access: agentd.AccessRead, Open: true},
	} {
		if _, err := cn.d.SetStateAccess(ctx, cn.agent.Npub, req); !errors.Is(err, agentd.ErrBadRequest) {
			t.Errorf("%+v: %v, want ErrBadRequest", req, err)
		}
	}
	if _, err := cn.d.SetStateAccess(ctx, cn.agent.Npub, agentd.StateAccessRequest{Schema: "did:nuwa:core:MemoryStore#v1", Access: agentd.AccessRead, Open: true}); err != nil {
		t.Errorf("a core model: %v", err)
	}
	if _, err := cn.d.SetStateAccess(ctx, "nobody", agentd.StateAccessRequest{Schema: noteURI, Access: agentd.AccessRead}); !errors.Is(err, agentd.ErrUnknownAgent) {
		t.Errorf("unknown agent: %v", err)
	}
}
