package nostrrpc_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"

	"github.com/agentnode/agentnode/agentd/nostrrpc"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/jsonrpc"
)

// decrypt opens evt's content as reader sk (the other party is evt's
// author or, for the author itself, peer).
func decrypt(sk, peer, content string) (string, error) {
	ck, err := nip44.GenerateConversationKey(peer, sk)
	if err != nil {
		return "", err
	}
	return nip44.Decrypt(content, ck)
}

func TestClient_CallAcrossTwoNodes(t *testing.T) {
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	a, b := startNode(t, alice), startNode(t, bob)
	h := &handler{}
	b.serve(t, h, 4)
	seenOnB := captureOn(t, b)
	cl := a.client(t, a.url, b.url) // published to both; only B serves bob

	out, err := cl.CallAgent(callCtx(t), alice.PK, bob.PK, "echo", json.RawMessage(`{"text":"hi bob"}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Agent, From string
		Params      map[string]string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("result %s: %v", out, err)
	}
	if got.Agent != bob.PK || got.From != alice.PK || got.Params["text"] != "hi bob" {
		t.Fatalf("handler saw %+v, want agent bob from alice with text", got)
	}

	// On the wire: one request (alice -> bob, p bob) and one reply (bob ->
	// alice, p alice, e request), both encrypted, carrying the same id.
	evts := seenOnB.atLeast(t, 2)
	if len(evts) != 2 {
		t.Fatalf("relay B saw %d kind-25910 events, want 2", len(evts))
	}
	req, rep := byAuthor(evts, alice.PK), byAuthor(evts, bob.PK)
	if req == nil || rep == nil {
		t.Fatalf("relay B saw %v, want a request by alice and a reply by bob", evts)
	}
	if req.Kind != nostrrpc.Kind || req.PubKey != alice.PK || req.Tags.FindWithValue("p", bob.PK) == nil {
		t.Fatalf("request event %v", req)
	}
	if rep.PubKey != bob.PK || rep.Tags.FindWithValue("p", alice.PK) == nil || rep.Tags.FindWithValue("e", req.ID) == nil {
		t.Fatalf("reply event %v does not p-tag alice and e-tag %s", rep, req.ID)
	}
	reqPlain, err := decrypt(bob.SK, alice.PK, req.Content)
	if err != nil {
		t.Fatal(err)
	}
	repPlain, err := decrypt(alice.SK, bob.PK, rep.Content)
	if err != nil {
		t.Fatal(err)
	}
	var rq jsonrpc.Request
	var rs jsonrpc.Response
	json.Unmarshal([]byte(reqPlain), &rq)
	json.Unmarshal([]byte(repPlain), &rs)
	if rq.JSONRPC != "2.0" || rq.Method != "echo" || len(rq.ID) < 3 || rq.ID[0] != '"' {
		t.Fatalf("request %s is not a JSON-RPC 2.0 request with a string id", reqPlain)
	}
	if string(rs.ID) != string(rq.ID) || rs.JSONRPC != "2.0" {
		t.Fatalf("reply id %s, request id %s: the id did not survive", rs.ID, rq.ID)
	}
	if strings.Contains(req.Content, "hi bob") || strings.Contains(rep.Content, "hi bob") {
		t.Fatal("content travels in the clear")
	}
}

func TestClient_StrangerCannotRead(t *testing.T) {
	alice, bob, eve := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	a, b := startNode(t, alice), startNode(t, bob)
	replied := make(chan struct{}, 1)
	s := nostrrpc.NewServer(nostrrpc.ServerConfig{Source: b.relay, Keys: b.lookup, Handler: &handler{}, Logger: quietLogger(t),
		Publish: func(ctx context.Context, evt *nostr.Event) error {
			defer func() { replied <- struct{}{} }() // the broadcast is done when Publish returns
			return b.relay.Publish(ctx, evt)
		}})
	testkit.Run(t, "nostrrpc server", s.Run, s.Ready())
	seenOnB := captureOn(t, b)
	// eve AUTHs as herself and asks for every kind-25910 event on B.
	eavesdrop := listen(t, b.url, eve, nostr.Filter{Kinds: []int{nostrrpc.Kind}})

	cl := a.client(t, b.url)
	if _, err := cl.CallAgent(callCtx(t), alice.PK, bob.PK, "echo", json.RawMessage(`{"text":"secret"}`)); err != nil {
		t.Fatal(err)
	}
	<-replied
	// A round trip on eve's connection: whatever B wrote to her before
	// (the request's and the reply's broadcasts) has been read by now.
	if _, err := eavesdrop.w.Query(callCtx(t), nostr.Filter{Kinds: []int{1}, Limit: 1}); err != nil {
		t.Fatal(err)
	}
	if got := eavesdrop.got(); len(got) != 0 {
		t.Fatalf("eve received %d kind-25910 events of alice and bob", len(got))
	}
	// And the content, had she got it, does not open with her key.
	evts := seenOnB.atLeast(t, 2)
	if len(evts) != 2 {
		t.Fatalf("B saw %d events, want the request and the reply", len(evts))
	}
	for _, evt := range evts {
		if _, err := decrypt(eve.SK, evt.PubKey, evt.Content); err == nil {
			t.Fatalf("eve decrypted event %s", evt.ID)
		}
	}
}

func TestClient_UnknownMethodIsNotFound(t *testing.T) {
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	a, b := startNode(t, alice), startNode(t, bob)
	b.serve(t, &handler{}, 4)
	_, err := a.client(t, b.url).CallAgent(callCtx(t), alice.PK, bob.PK, "no.such.method", nil)
	if ce := wantCode(t, err, capabilities.CodeNotFound); !strings.Contains(ce.Message, "method not found") {
		t.Errorf("message %q", ce.Message)
	}
}

func TestClient_ErrorsCrossTheWireCoded(t *testing.T) {
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	a, b := startNode(t, alice), startNode(t, bob)
	b.serve(t, &handler{}, 4)
	cl := a.client(t, b.url)
	_, err := cl.CallAgent(callCtx(t), alice.PK, bob.PK, "invalid", nil)
	if ce := wantCode(t, err, capabilities.CodeInvalidInput); !strings.Contains(ce.Message, "field x is required") {
		t.Errorf("message %q", ce.Message)
	}
	_, err = cl.CallAgent(callCtx(t), alice.PK, bob.PK, "panic", nil) // the server survives it
	wantCode(t, err, capabilities.CodeExecutionFailed)
	_, err = cl.CallAgent(callCtx(t), alice.PK, bob.PK, "secret", nil)
	if ce := wantCode(t, err, capabilities.CodeExecutionFailed); strings.Contains(ce.Message, "hunter2") {
		t.Errorf("internal error text leaked to the peer: %q", ce.Message)
	}
}

func TestClient_Timeouts(t *testing.T) {
	alice, bob, nobody := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	a, b := startNode(t, alice), startNode(t, bob)
	b.serve(t, &handler{}, 4)
	cl := a.client(t, b.url)
	for name, tc := range map[string]struct{ target, method string }{
		"slow handler":  {bob.PK, "slow"},
		"nobody serves": {nobody.PK, "echo"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := cl.CallAgent(ctx, alice.PK, tc.target, tc.method, nil)
			wantCode(t, err, capabilities.CodeTimeout)
		})
	}
}

func TestClient_BadCallerOrTarget(t *testing.T) {
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	a := startNode(t, alice)
	cl := a.client(t, a.url)
	_, err := cl.CallAgent(callCtx(t), bob.PK, alice.PK, "echo", nil) // bob is not local
	wantCode(t, err, capabilities.CodePermissionDenied)
	_, err = cl.CallAgent(callCtx(t), alice.PK, "npub1notdecoded", "echo", nil)
	wantCode(t, err, capabilities.CodeInvalidInput)
}

func TestClient_NoRelayReachable(t *testing.T) {
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	a := startNode(t, alice)
	cl := nostrrpc.NewClient(nostrrpc.ClientConfig{Relays: []string{"ws://127.0.0.1:1"}, Keys: a.secret, Logger: quietLogger(t)})
	defer cl.Close()
	_, err := cl.CallAgent(callCtx(t), alice.PK, bob.PK, "echo", nil)
	wantCode(t, err, capabilities.CodeExecutionFailed)
}
