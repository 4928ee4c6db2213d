package interop_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/consent"
)

// consoleReport is what console.mjs saw.
type consoleReport struct {
	Console           []string
	SignInForm        bool
	Wrong             int
	WrongError        string
	AfterWrongPending bool
	Right             int
	RowBefore         bool
	SummaryText       string
	SummaryElements   int
	ApproveStatus     int
	Notice            string
	RowAfter          bool
	Decided           string
	Pwned             bool
}

// TestOwnerConsoleInChromium: a pending consent request (recorded in the
// node's own consent database, as an agent asking for a remote delegation
// does) is approved end to end by a person in a real browser: a wrong
// token is refused, naming where this node's token is (its --data, not
// the default directory), the right one signs in, the request is listed (its
// summary as text, never markup), one click approves it, and the node's
// consent store says approved.
func TestOwnerConsoleInChromium(t *testing.T) {
	root := moduleRoot(t)
	node := browserPrereqs(t, root)
	shots := artifactsDir(t, root, "console")
	bin := buildAgentnode(t, root)
	data := t.TempDir()
	srv := startServerWith(t, bin, data, nil)
	t.Cleanup(func() { srv.stop(t) })
	token := apiToken(t, data)
	store, err := consent.Open(context.Background(), consent.Config{Path: filepath.Join(data, "agents", "consent.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	agent, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	asked, err := store.Ask(context.Background(), consent.Request{Op: "delegate.remote", Agent: agent,
		Target: "npub1peer", Summary: `translate a file <script>window.__pwned=true</script>`})
	if err != nil {
		t.Fatal(err)
	}

	spec := map[string]string{"chromium": chromiumPath, "shots": shots, "base": "http://" + srv.addr,
		"token": token, "wrong": "not-the-token", "approval": asked.ID}
	var r consoleReport
	runBrowserScript(t, node, root, "console.mjs", spec, &r)
	switch {
	case !r.SignInForm:
		t.Error("/console shows no sign-in form")
	case r.Wrong != 401 || !strings.Contains(r.WrongError, "not this node's API token ("+filepath.Join(data, "agents", "api.token")+")") || r.AfterWrongPending:
		t.Errorf("a wrong token: status %d, error %q, pending list shown %v", r.Wrong, r.WrongError, r.AfterWrongPending)
	case r.Right != 200 || !r.RowBefore:
		t.Errorf("the right token: status %d, the pending request listed %v", r.Right, r.RowBefore)
	case !strings.Contains(r.SummaryText, "<script>") || r.SummaryElements != 0 || r.Pwned:
		t.Errorf("the summary must show as text: %q, %d elements, script ran %v", r.SummaryText, r.SummaryElements, r.Pwned)
	case r.ApproveStatus != 200 || !strings.Contains(r.Notice, "approved "+asked.ID) || r.RowAfter || !strings.Contains(r.Decided, "approved"):
		t.Errorf("approve: status %d, notice %q, still pending %v, decided %q", r.ApproveStatus, r.Notice, r.RowAfter, r.Decided)
	}
	for _, m := range r.Console {
		if !strings.Contains(m, "status of 401") { // the wrong token's answer
			t.Errorf("the browser logged: %s", m)
		}
	}
	got, err := store.Get(context.Background(), asked.ID)
	if err != nil || got.Status != consent.StatusApproved {
		t.Fatalf("the node's consent store: %+v, %v; want approved", got, err)
	}
	t.Logf("screenshots in %s", shots)
}
