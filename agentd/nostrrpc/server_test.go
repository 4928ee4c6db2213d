package nostrrpc_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"

	"github.com/agentnode/agentnode/agentd/nostrrpc"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/jsonrpc"
)

// rawRequest signs a kind-25910 event from `from` to `to` carrying plain
// (encrypted), as a hand-written client would.
func rawRequest(t *testing.T, from key, to string, plain string) *nostr.Event {
	t.Helper()
	ck, err := nip44.GenerateConversationKey(to, from.SK)
	if err != nil {
		t.Fatal(err)
	}
	content, err := nip44.Encrypt(plain, ck)
	if err != nil {
		t.Fatal(err)
	}
	evt := &nostr.Event{Kind: nostrrpc.Kind, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"p", to}}, Content: content}
	if err := evt.Sign(from.SK); err != nil {
		t.Fatal(err)
	}
	return evt
}

// exchange publishes req on n as `from` would and returns the decrypted
// reply from `to`.
func exchange(t *testing.T, n *node, from key, to string, req *nostr.Event) jsonrpc.Response {
	t.Helper()
	plain := exchangeRaw(t, n, from, to, req)
	var resp jsonrpc.Response
	if err := json.Unmarshal([]byte(plain), &resp); err != nil {
		t.Fatalf("reply %s: %v", plain, err)
	}
	return resp
}

// exchangeRaw is exchange returning the reply's decrypted content as is.
func exchangeRaw(t *testing.T, n *node, from key, to string, req *nostr.Event) string {
	t.Helper()
	l := listen(t, n.url, from, nostr.Filter{Kinds: []int{nostrrpc.Kind}, Tags: nostr.TagMap{"p": {from.PK}, "e": {req.ID}}})
	if err := n.relay.Publish(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reply", func() bool { return len(l.got()) > 0 })
	rep := l.got()[0]
	plain, err := decrypt(from.SK, rep.PubKey, rep.Content)
	if err != nil || rep.PubKey != to {
		t.Fatalf("reply from %s does not open: %v", rep.PubKey, err)
	}
	return plain
}

// A batch is dispatched by jsonrpc.Server as over HTTP: in order, one
// answer per request, a panic an internal error without its text, and
// a batch over the limit refused whole.
func TestServer_BatchFollowsTheHTTPRules(t *testing.T) {
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	b := startNode(t, bob)
	h := &handler{}
	b.serve(t, h, 1)
	batch := `[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","method":"echo"},` +
		`{"jsonrpc":"2.0","id":2,"method":"panic"},{"jsonrpc":"2.0","id":3,"method":"nope"}]`
	var got []jsonrpc.Response
	if err := json.Unmarshal([]byte(exchangeRaw(t, b, alice, bob.PK, rawRequest(t, alice, bob.PK, batch))), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Result == nil || got[1].Error == nil || got[1].Error.Code != jsonrpc.CodeInternalError ||
		strings.Contains(got[1].Error.Message, "handler bug") || got[2].Error == nil || got[2].Error.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("batch answers = %+v", got)
	}
	if n := h.count(); n != 2 {
		t.Fatalf("echo ran %d times, want 2 (the request and the notification)", n)
	}
	long := "[" + strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"echo"},`, jsonrpc.DefaultMaxBatch) + `{"jsonrpc":"2.0","id":1,"method":"echo"}]`
	resp := exchange(t, b, alice, bob.PK, rawRequest(t, alice, bob.PK, long))
	if resp.Error == nil || resp.Error.Code != jsonrpc.CodeInvalidRequest || h.count() != 2 {
		t.Fatalf("over-long batch: %+v, echo ran %d times", resp, h.count())
	}
}

func TestServer_BadRequestsGetJSONRPCErrors(t *testing.T) {
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	b := startNode(t, bob)
	b.serve(t, &handler{}, 4)
	for name, tc := range map[string]struct {
		plain, wantID string
		wantCode      int
	}{
		"not json":         {`{"jsonrpc":"2.0",`, "null", jsonrpc.CodeParseError},
		"wrong version":    {`{"jsonrpc":"1.0","id":"r1","method":"echo"}`, `"r1"`, jsonrpc.CodeInvalidRequest},
		"no method":        {`{"jsonrpc":"2.0","id":7}`, `7`, jsonrpc.CodeInvalidRequest},
		"object id":        {`{"jsonrpc":"2.0","id":{"x":1},"method":"echo"}`, "null", jsonrpc.CodeInvalidRequest},
		"unknown method":   {`{"jsonrpc":"2.0","id":"r2","method":"nope"}`, `"r2"`, jsonrpc.CodeMethodNotFound},
		"capability error": {`{"jsonrpc":"2.0","id":"r3","method":"invalid"}`, `"r3"`, jsonrpc.CodeInvalidParams},
	} {
		t.Run(name, func(t *testing.T) {
			resp := exchange(t, b, alice, bob.PK, rawRequest(t, alice, bob.PK, tc.plain))
			if resp.Error == nil || resp.Error.Code != tc.wantCode || string(resp.ID) != tc.wantID {
				t.Fatalf("reply = id %s error %+v, want id %s code %d", resp.ID, resp.Error, tc.wantID, tc.wantCode)
			}
		})
	}
}

// An answer NIP-44 cannot carry is a -32600 error the caller gets, not a
// reply that is never sent.
func TestServer_TooLargeAnswerIsAnError(t *testing.T) {
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	b := startNode(t, bob)
	b.serve(t, &handler{}, 1)
	resp := exchange(t, b, alice, bob.PK, rawRequest(t, alice, bob.PK, `{"jsonrpc":"2.0","id":"big","method":"big"}`))
	if resp.Error == nil || resp.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(resp.Error.Message, "65535 bytes") || string(resp.ID) != `"big"` {
		t.Fatalf("reply = id %s error %+v; want -32600 saying the answer would exceed 65535 bytes", resp.ID, resp.Error)
	}
}

func TestServer_NumericIDSurvives(t *testing.T) {
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	b := startNode(t, bob)
	b.serve(t, &handler{}, 4)
	resp := exchange(t, b, alice, bob.PK, rawRequest(t, alice, bob.PK, `{"jsonrpc":"2.0","id":42,"method":"echo","params":[1]}`))
	if string(resp.ID) != "42" || resp.Error != nil || resp.Result == nil {
		t.Fatalf("reply = %+v, want id 42 with a result", resp)
	}
}

// With one worker the queue is served in order, so once a later request
// is answered every earlier one has been dealt with.
func TestServer_ReplayAnsweredOnce(t *testing.T) {
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	b := startNode(t, bob)
	h := &handler{}
	b.serve(t, h, 1)
	req := rawRequest(t, alice, bob.PK, `{"jsonrpc":"2.0","id":"once","method":"echo"}`)
	exchange(t, b, alice, bob.PK, req)

	replies := listen(t, b.url, alice, nostr.Filter{Kinds: []int{nostrrpc.Kind}, Tags: nostr.TagMap{"p": {alice.PK}, "e": {req.ID}}})
	if err := b.relay.Publish(context.Background(), req); err != nil { // the same event again
		t.Fatal(err)
	}
	// The same JSON-RPC id from the same caller in a new event is a new
	// request (a new MCP session numbers from 0 again): answered.
	exchange(t, b, alice, bob.PK, rawRequest(t, alice, bob.PK, `{"jsonrpc":"2.0","id":"once","method":"echo","params":{"n":2}}`))
	exchange(t, b, alice, bob.PK, rawRequest(t, alice, bob.PK, `{"jsonrpc":"2.0","id":"later","method":"echo"}`))
	if n := h.count(); n != 3 {
		t.Fatalf("handler ran %d times, want 3 (the replayed event unanswered)", n)
	}
	if got := replies.got(); len(got) != 0 {
		t.Fatalf("the replay was answered %d times", len(got))
	}
}

func TestServer_IgnoresWhatIsNotARequestForItsAgents(t *testing.T) {
	alice, bob, carol := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	b := startNode(t, bob, alice) // alice is local too: bob's replies to her pass the server
	h := &handler{}
	b.serve(t, h, 1)
	seen := captureOn(t, b)

	toCarol := rawRequest(t, alice, carol.PK, `{"jsonrpc":"2.0","id":"c","method":"echo"}`) // not local
	notification := rawRequest(t, alice, bob.PK, `{"jsonrpc":"2.0","method":"echo"}`)       // no id: no reply
	response := rawRequest(t, alice, bob.PK, `{"jsonrpc":"2.0","id":"x","result":1}`)       // never answered
	stale := rawRequest(t, alice, bob.PK, `{"jsonrpc":"2.0","id":"old","method":"echo"}`)
	stale.CreatedAt -= 3600
	stale.Sign(alice.SK)
	future := rawRequest(t, alice, bob.PK, `{"jsonrpc":"2.0","id":"future","method":"echo"}`)
	future.CreatedAt += 600 // past MaxAge ahead (the relay takes up to 900 s): it would outlive the replay memory
	future.Sign(alice.SK)
	for _, evt := range []*nostr.Event{toCarol, notification, response, stale, future} {
		if err := b.relay.Publish(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
	}
	exchange(t, b, alice, bob.PK, rawRequest(t, alice, bob.PK, `{"jsonrpc":"2.0","id":"last","method":"echo"}`))

	if n := h.count(); n != 2 { // the notification and "last"
		t.Fatalf("handler ran %d times, want 2", n)
	}
	replies := 0
	for _, evt := range seen.all() {
		if evt.PubKey == bob.PK {
			replies++
		}
	}
	if replies != 1 {
		t.Fatalf("bob sent %d replies, want 1 (to \"last\" only)", replies)
	}
}
