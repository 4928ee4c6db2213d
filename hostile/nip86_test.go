package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip86"

	"github.com/agentnode/agentnode/internal/testkit"
)

// manageCall posts a NIP-86 call to n signed (NIP-98) by sk ("" sends no
// Authorization) and returns the status and the decoded answer.
func manageCall(t *testing.T, n *node, sk, method string, params ...any) (int, nip86.Response) {
	t.Helper()
	body, _ := json.Marshal(nip86.Request{Method: method, Params: params})
	auth := ""
	if sk != "" {
		var err error
		if auth, err = testkit.NIP98Header(sk, "http://"+n.addr+"/", "POST", body); err != nil {
			t.Fatal(err)
		}
	}
	return postManage(t, n, auth, body)
}

// postManage posts body to n's NIP-86 endpoint with the Authorization auth.
func postManage(t *testing.T, n *node, auth string, body []byte) (int, nip86.Response) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+n.addr+"/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/nostr+json+rpc")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("NIP-86 %s: %v", body, err)
	}
	defer resp.Body.Close()
	var out nip86.Response
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("NIP-86 answer is not JSON: %v", err)
	}
	return resp.StatusCode, out
}

// mustManage is manageCall that must succeed.
func mustManage(t *testing.T, n *node, sk, method string, params ...any) any {
	t.Helper()
	status, resp := manageCall(t, n, sk, method, params...)
	if status != http.StatusOK || resp.Error != "" {
		t.Fatalf("%s %v: %d %q", method, params, status, resp.Error)
	}
	return resp.Result
}

// refusedWith publishes "hello" and wants a refusal containing prefix.
func refusedWith(t *testing.T, n *node, sk string, kind int, prefix string) {
	t.Helper()
	refusedContent(t, n, sk, kind, "hello", prefix)
}

// refusedContent publishes content and wants a refusal containing prefix.
func refusedContent(t *testing.T, n *node, sk string, kind int, content, prefix string) {
	t.Helper()
	_, err := publish(n.client(t), sk, kind, nil, content, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), prefix) {
		t.Fatalf("kind %d: got %v, want a refusal %q", kind, err, prefix)
	}
}

// accepted publishes and wants an OK.
func accepted(t *testing.T, n *node, sk string, kind int, content string) *nostr.Event {
	t.Helper()
	evt, err := publish(n.client(t), sk, kind, nil, content, 10*time.Second)
	if err != nil {
		t.Fatalf("kind %d: %v", kind, err)
	}
	return evt
}

// stored counts the events matching f on n.
func stored(t *testing.T, n *node, f nostr.Filter) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evts, err := n.client(t).Query(ctx, nostr.Filters{f})
	if err != nil {
		t.Fatal(err)
	}
	return len(evts)
}

// TestNIP86_Strangers: without auth, with a stranger's key, with a bad
// payload hash or a replayed auth event, a NIP-86 call is 401 and
// changes nothing.
func TestNIP86_Strangers(t *testing.T) {
	op, stranger := testkit.NewKey(t), testkit.NewKey(t)
	n := startNode(t, map[string]any{"operators": []string{op.PK}})
	for name, sk := range map[string]string{"no auth": "", "a stranger": stranger.SK} {
		status, resp := manageCall(t, n, sk, "banpubkey", stranger.PK, "test")
		if status != http.StatusUnauthorized || !strings.HasPrefix(resp.Error, "unauthorized:") {
			t.Errorf("%s: %d %q, want 401 unauthorized", name, status, resp.Error)
		}
	}
	body := []byte(`{"method":"banpubkey","params":["` + stranger.PK + `"]}`)
	other, _ := testkit.NIP98Header(op.SK, "http://"+n.addr+"/", "POST", []byte(`{"method":"supportedmethods","params":[]}`))
	if status, resp := postManage(t, n, other, body); status != http.StatusUnauthorized || !strings.Contains(resp.Error, "payload") {
		t.Errorf("another body's auth: %d %q, want 401 naming the payload", status, resp.Error)
	}
	auth, _ := testkit.NIP98Header(op.SK, "http://"+n.addr+"/", "POST", body)
	if status, _ := postManage(t, n, auth, body); status != http.StatusOK {
		t.Fatalf("the operator's call: %d", status)
	}
	if status, resp := postManage(t, n, auth, body); status != http.StatusUnauthorized || !strings.Contains(resp.Error, "used already") {
		t.Errorf("a replayed auth: %d %q, want 401", status, resp.Error)
	}
	if status, resp := postManage(t, n, "Nostr !!!", []byte("{")); status != http.StatusUnauthorized {
		t.Errorf("garbage auth: %d %q, want 401", status, resp.Error)
	}
	// a stranger's flood: every call 401 (refused before any signature
	// check), and the operator still gets through
	for i := range 500 {
		if status, _ := manageCall(t, n, stranger.SK, "deleteevents", map[string]any{"kinds": []int{i}}); status != http.StatusUnauthorized {
			t.Fatalf("a stranger's call %d: %d", i, status)
		}
	}
	mustManage(t, n, op.SK, "supportedmethods")
	if !n.healthy() {
		t.Fatal("the node is not healthy")
	}
}

// TestNIP86_Lists: the operator bans and allows pubkeys, kinds and
// events over NIP-86; the relay refuses what they exclude with "blocked:";
// the lists survive a restart.
func TestNIP86_Lists(t *testing.T) {
	op, alice, bob := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	cfg := map[string]any{"relay": map[string]any{"operators": []string{op.PK}, "events_per_second": -1}}
	n := launchNode(t, launch{config: cfg, logLevel: "info"})

	methods, _ := mustManage(t, n, op.SK, "supportedmethods").([]any)
	if len(methods) < 10 {
		t.Fatalf("supportedmethods: %v", methods)
	}
	accepted(t, n, bob.SK, 1, "before the ban")
	mustManage(t, n, op.SK, "banpubkey", bob.PK, "spam")
	refusedWith(t, n, bob.SK, 1, "blocked: this pubkey is banned")
	mustManage(t, n, op.SK, "disallowkind", 7)
	refusedWith(t, n, alice.SK, 7, "blocked: kind 7")
	evt := accepted(t, n, alice.SK, 1, "to be banned")
	mustManage(t, n, op.SK, "banevent", evt.ID, "off topic")
	if got := stored(t, n, nostr.Filter{IDs: []string{evt.ID}}); got != 0 {
		t.Errorf("a banned event is still served (%d)", got)
	}
	if _, err := publish(n.client(t), alice.SK, 1, nil, "", 10*time.Second); err != nil {
		t.Fatalf("alice: %v", err)
	}

	// a restart on the same data directory keeps the lists
	n.cmd.Process.Kill()
	<-n.exited
	n = launchNode(t, launch{data: n.data, config: cfg, logLevel: "info"})
	refusedWith(t, n, bob.SK, 1, "blocked: this pubkey is banned")
	refusedWith(t, n, alice.SK, 7, "blocked: kind 7")
	banned, _ := mustManage(t, n, op.SK, "listbannedpubkeys").([]any)
	if len(banned) != 1 || !strings.Contains(toJSON(banned), bob.PK) || !strings.Contains(toJSON(banned), "spam") {
		t.Errorf("listbannedpubkeys: %s", toJSON(banned))
	}

	// an allowlist: only listed pubkeys publish
	mustManage(t, n, op.SK, "allowpubkey", alice.PK, "member")
	accepted(t, n, alice.SK, 1, "a member")
	refusedWith(t, n, testkit.NewKey(t).SK, 1, "blocked: this relay accepts events only from the pubkeys")
	mustManage(t, n, op.SK, "unlistpubkey", alice.PK)
	mustManage(t, n, op.SK, "unlistpubkey", bob.PK)
	mustManage(t, n, op.SK, "unlistkind", 7)
	accepted(t, n, bob.SK, 7, "forgiven")
}

// TestNIP86_DeleteEvents: deleteevents (agentnode's extension) deletes
// what a filter matches and nothing else; an empty filter is refused.
func TestNIP86_DeleteEvents(t *testing.T) {
	op, spammer, alice := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	n := startNode(t, map[string]any{"operators": []string{op.PK}, "events_per_second": -1})
	for i := range 30 {
		accepted(t, n, spammer.SK, 1, "spam "+strconv.Itoa(i))
	}
	accepted(t, n, spammer.SK, 7, "+") // not matched by the filter's kinds: stays
	accepted(t, n, alice.SK, 1, "alice stays")
	if status, resp := manageCall(t, n, op.SK, "deleteevents", map[string]any{}); status != http.StatusOK || !strings.HasPrefix(resp.Error, "invalid:") {
		t.Errorf("an empty filter: %d %q", status, resp.Error)
	}
	res, _ := mustManage(t, n, op.SK, "deleteevents", map[string]any{"authors": []string{spammer.PK}, "kinds": []int{1}}).(map[string]any)
	if res["deleted"] != float64(30) || res["more"] != false {
		t.Errorf("deleteevents: %v, want 30 deleted, no more", res)
	}
	if got := stored(t, n, nostr.Filter{Authors: []string{spammer.PK}, Kinds: []int{1}}); got != 0 {
		t.Errorf("%d of the spammer's notes remain", got)
	}
	if stored(t, n, nostr.Filter{Authors: []string{alice.PK}}) != 1 || stored(t, n, nostr.Filter{Authors: []string{spammer.PK}}) != 1 {
		t.Error("an event the filter does not match was deleted")
	}
}

// TestNIP86_AgentKindsOnly: with agent_kinds_only a stranger's kind-1
// note is refused and the agent network's kinds are stored.
func TestNIP86_AgentKindsOnly(t *testing.T) {
	op, alice := testkit.NewKey(t), testkit.NewKey(t)
	n := startNode(t, map[string]any{"operators": []string{op.PK}, "agent_kinds_only": true})
	refusedWith(t, n, alice.SK, 1, "blocked: kind 1 is not accepted: this relay stores the agent network's kinds only")
	if _, err := publish(n.client(t), alice.SK, 4199, nostr.Tags{{"title", "An agent"}}, "", 10*time.Second); err != nil {
		t.Fatalf("a definition: %v", err)
	}
	accepted(t, n, alice.SK, 0, `{"name":"alice"}`)
	mustManage(t, n, op.SK, "allowkind", 1)
	accepted(t, n, alice.SK, 1, "allowed by the operator")
	kinds, _ := mustManage(t, n, op.SK, "listallowedkinds").([]any)
	if !strings.Contains(toJSON(kinds), "4199") || !strings.Contains(toJSON(kinds), ",1,") && !strings.HasPrefix(toJSON(kinds), "[0,1,") {
		t.Errorf("listallowedkinds: %s", toJSON(kinds))
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
