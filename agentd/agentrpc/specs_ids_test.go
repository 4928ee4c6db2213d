package agentrpc_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"

	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/capabilities/llm"
)

// Issue 27's Agent Context Protocol edges, over the served endpoint (the
// Service behind a real HTTP server, the real directory over a real relay).

// specMessage is agent/message's params from source to target.
func specMessage(source, target string) map[string]any {
	return map[string]any{"source": source, "target": target, "content": map[string]any{"type": "request",
		"payload": map[string]any{"messages": []map[string]any{{"text": "hi"}}}}}
}

// TestSpecIDs_freeFormWithProof: agent/register with the spec's free-form
// id ("agent-id-1") and a valid proof registers the proven key under that
// id; the id then works in agent/heartbeat and as a message target, and an
// unverified registration may not take it.
func TestSpecIDs_freeFormWithProof(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(withToken(f.svc))
	defer srv.Close()
	proof := json.RawMessage(heartbeatJSON(t, dave, "active", false))
	var reg struct {
		AgentID string `json:"agentId"`
		Agent   struct {
			ID         string `json:"id"`
			Unverified string `json:"unverified"`
		} `json:"agent"`
	}
	mustCall(t, srv.URL, "agent/register", map[string]any{"agent": map[string]any{"id": "agent-id-1", "name": "Dave"}, "proof": proof}, &reg)
	if reg.AgentID != "agent-id-1" || reg.Agent.ID != dave.pk || reg.Agent.Unverified != "" {
		t.Fatalf("register agent-id-1 with a proof = %+v; want dave's key, proven, named agent-id-1", reg)
	}
	mustCall(t, srv.URL, "agent/heartbeat", map[string]any{"agentId": "agent-id-1", "status": "active", "proof": proof}, nil)
	if _, e := call(t, srv.URL, "agent/message", specMessage(alice.pk, "agent-id-1")); e != nil && e.Code == -32001 {
		t.Fatalf("agent/message to agent-id-1: %d %s; want the id to name dave", e.Code, e.Message)
	}
	if _, e := call(t, srv.URL, "agent/register", map[string]any{"agent": map[string]any{"id": "agent-id-1"}}); e == nil || e.Code != -32001 {
		t.Fatalf("an unverified registration of a proven agent's id: %+v; want -32001", e)
	}
	if _, e := call(t, srv.URL, "agent/register", map[string]any{"agent": map[string]any{"id": "bad id!"}, "proof": proof}); e == nil || e.Code != -32001 {
		t.Fatalf("register \"bad id!\" with a proof: %+v; want -32001", e)
	}
}

// TestSpecIDs_rules: one id rule everywhere: "bad id!" is refused at
// registration (-32001); a well-formed id nobody registered is -32002 as a
// target, in a heartbeat and in unregister; a spec-form registration can be
// unregistered by its id.
func TestSpecIDs_rules(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(withToken(f.svc))
	defer srv.Close()
	if _, e := call(t, srv.URL, "agent/register", map[string]any{"agent": map[string]any{"id": "bad id!"}}); e == nil || e.Code != -32001 {
		t.Fatalf("register \"bad id!\": %+v; want -32001", e)
	}
	if _, e := call(t, srv.URL, "agent/message", specMessage(alice.pk, "bad id!")); e == nil || e.Code != -32001 {
		t.Fatalf("message to \"bad id!\": %+v; want -32001", e)
	}
	if _, e := call(t, srv.URL, "agent/message", specMessage(alice.pk, "agent-id-2")); e == nil || e.Code != -32002 {
		t.Fatalf("message to the unregistered agent-id-2: %+v; want -32002", e)
	}
	mustCall(t, srv.URL, "agent/register", map[string]any{"agent": map[string]any{"id": "agent-id-2",
		"auth": map[string]any{"token": "secure-auth-token", "signature": "digital-signature-string"}}}, nil)
	mustCall(t, srv.URL, "agent/heartbeat", map[string]any{"agentId": "agent-id-2", "status": "active"}, nil)
	var un map[string]string
	mustCall(t, srv.URL, "agent/unregister", map[string]any{"agentId": "agent-id-2"}, &un)
	if un["status"] != "unregistered" {
		t.Fatalf("unregister agent-id-2 = %v", un)
	}
	for _, m := range []string{"agent/heartbeat", "agent/unregister"} {
		if _, e := call(t, srv.URL, m, map[string]any{"agentId": "agent-id-2", "status": "active"}); e == nil || e.Code != -32002 {
			t.Fatalf("%s after unregister: %+v; want -32002", m, e)
		}
	}
}

// TestSpecAuth: the spec's auth object is checked as far as it can be: the
// token against the node's API token, the signature when the id is a key.
func TestSpecAuth(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(withToken(f.svc))
	defer srv.Close()
	unverified := func(id string, auth map[string]any) (string, *rpcError) {
		t.Helper()
		res, e := call(t, srv.URL, "agent/register", map[string]any{"agent": map[string]any{"id": id, "auth": auth}})
		var out struct {
			Agent struct {
				Unverified string `json:"unverified"`
			} `json:"agent"`
		}
		json.Unmarshal(res, &out)
		return out.Agent.Unverified, e
	}
	for _, tc := range []struct {
		id   string
		auth map[string]any
		want string
	}{
		{"with-token", map[string]any{"token": testToken}, "auth: token verified"},
		{"other-token", map[string]any{"token": "secure-auth-token"}, "auth: token not this node's"},
		{"agent-id-1", map[string]any{"token": "t", "signature": "digital-signature-string"}, "signature unchecked (no key)"},
		{erin.pk, map[string]any{"token": "t", "signature": authSig(t, erin.sk, "t")}, "signature verified"},
	} {
		got, e := unverified(tc.id, tc.auth)
		if e != nil || !strings.Contains(got, tc.want) {
			t.Fatalf("register %s with auth %v: %q %+v; want %q", tc.id, tc.auth, got, e, tc.want)
		}
	}
	if _, e := unverified(erin.pk, map[string]any{"token": "t", "signature": authSig(t, erin.sk, "other")}); e == nil || e.Code != -32009 {
		t.Fatalf("a signature of another token by the id's key: %+v; want -32009", e)
	}
}

// authSig is a BIP-340 signature by sk of sha256(token), hex.
func authSig(t *testing.T, sk, token string) string {
	t.Helper()
	b, _ := hex.DecodeString(sk)
	priv, _ := btcec.PrivKeyFromBytes(b)
	h := sha256.Sum256([]byte(token))
	sig, err := schnorr.Sign(priv, h[:])
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(sig.Serialize())
}

// TestSampling_maxTokensTemperature: sampling/createMessage passes the
// caller's maxTokens and temperature to the model; out-of-range values are
// -32001.
func TestSampling_maxTokensTemperature(t *testing.T) {
	var asked struct {
		MaxTokens   int      `json:"max_tokens"`
		Temperature *float64 `json:"temperature"`
	}
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&asked)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"model":"tiny-1","choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`))
	}))
	defer provider.Close()
	model, err := llm.New(llm.Config{BaseURL: provider.URL + "/v1", Model: "tiny-1"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	svc := agentrpc.New(agentrpc.Config{Token: testToken, Directory: f.dir, Tasks: f.tasks, Messenger: f.echo, Model: model, Logger: quiet})
	srv := httptest.NewServer(withToken(svc))
	defer srv.Close()
	msgs := []map[string]any{{"role": "user", "content": map[string]any{"type": "text", "text": "status?"}}}
	mustCall(t, srv.URL, "sampling/createMessage", map[string]any{"messages": msgs, "maxTokens": 100, "temperature": 0.3}, nil)
	if asked.MaxTokens != 100 || asked.Temperature == nil || *asked.Temperature != 0.3 {
		t.Fatalf("the model was asked max_tokens %d temperature %v; want 100 and 0.3", asked.MaxTokens, asked.Temperature)
	}
	for _, bad := range []map[string]any{{"maxTokens": -1}, {"temperature": 3}} {
		bad["messages"] = msgs
		if _, e := call(t, srv.URL, "sampling/createMessage", bad); e == nil || e.Code != -32001 {
			t.Fatalf("sampling with %v: %+v; want -32001", bad, e)
		}
	}
}
