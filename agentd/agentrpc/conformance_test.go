package agentrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
)

var update = flag.Bool("update", false, "rewrite the responses in testdata/conformance from the current behaviour")

// step is one transcript file: a request (or raw body) sent as one HTTP
// POST, after the owner's actions in before, and the response expected.
type step struct {
	About    string          `json:"about"`
	Before   *before         `json:"before,omitempty"`
	Raw      *string         `json:"raw,omitempty"`
	Request  json.RawMessage `json:"request,omitempty"`
	Response *response       `json:"response,omitempty"`
}

// before lists what the owner does first.
type before struct {
	Ask      *consent.Request `json:"ask,omitempty"`
	Approve  string           `json:"approve,omitempty"`
	Revoke   string           `json:"revoke,omitempty"`
	Unrevoke string           `json:"unrevoke,omitempty"`
}

type response struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// TestConformance replays testdata/conformance/*.json in order against
// the endpoint over real HTTP, with a real relay-backed directory, task
// store and consent store; -update rewrites the responses.
func TestConformance(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(withToken(f.svc))
	defer srv.Close()
	files := transcripts(t)
	subst := substitutions(t)
	for _, file := range files {
		s := readStep(t, file)
		f.applyBefore(t, s.Before)
		got := roundTrip(t, srv.URL, s.body(subst))
		if *update {
			s.Response = got
			if err := os.WriteFile(file, encode(s), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if s.Response == nil || s.Response.Status != got.Status || indent(s.Response.Body) != indent(got.Body) {
			t.Errorf("%s (%s):\n got %d %s\nwant %s\n(run with -update if the change is meant)", filepath.Base(file), s.About, got.Status, indent(got.Body), want(s.Response))
		}
	}
}

func transcripts(t *testing.T) []string {
	files, _ := filepath.Glob("testdata/conformance/*.json")
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata/conformance")
	}
	return files
}

func readStep(t *testing.T, file string) step { return readStepFile(t, file) }

func readStepFile(t testing.TB, file string) step {
	t.Helper()
	var s step
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return s
}

// TestConformance_WebSocket replays the same transcripts over one
// WebSocket on a fresh node: every response frame must be the recorded
// body, and where HTTP answered 204 (notifications only) no frame comes
// (the next frame answers a ping sent after it).
func TestConformance_WebSocket(t *testing.T) {
	if *update {
		t.Skip("transcripts are recorded over HTTP")
	}
	f := newFixture(t)
	srv := httptest.NewServer(withToken(f.svc))
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	subst := substitutions(t)
	const sentinel = `{"jsonrpc":"2.0","id":"sentinel","method":"ping"}`
	for _, file := range transcripts(t) {
		s := readStep(t, file)
		f.applyBefore(t, s.Before)
		send(t, conn, string(s.body(subst)))
		want := indent(s.Response.Body)
		if s.Response.Status == http.StatusNoContent {
			send(t, conn, sentinel)
			want = indent(json.RawMessage(`{"jsonrpc":"2.0","result":{},"id":"sentinel"}`))
		}
		conn.SetReadDeadline(time.Now().Add(testWait))
		_, frame, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if got := indent(json.RawMessage(normalise(string(frame)))); got != want {
			t.Errorf("%s over WebSocket:\n got %s\nwant %s", filepath.Base(file), got, want)
		}
	}
}

func (s step) body(subst func(string) string) []byte {
	if s.Raw != nil {
		return []byte(*s.Raw)
	}
	return []byte(subst(string(s.Request)))
}

func (f *fixture) applyBefore(t *testing.T, b *before) {
	t.Helper()
	if b == nil {
		return
	}
	ctx := context.Background()
	if b.Ask != nil {
		if _, err := f.consent.Ask(ctx, *b.Ask); err != nil {
			t.Fatal(err)
		}
	}
	if b.Approve != "" {
		if _, err := f.consent.Approve(ctx, b.Approve); err != nil {
			t.Fatal(err)
		}
	}
	if b.Revoke != "" {
		if _, err := f.consent.Revoke(ctx, pkOf(b.Revoke), "test"); err != nil {
			t.Fatal(err)
		}
	}
	if b.Unrevoke != "" {
		if _, err := f.consent.Unrevoke(ctx, pkOf(b.Unrevoke)); err != nil {
			t.Fatal(err)
		}
	}
}

var everyone = []key{alice, bob, carol, dave, erin}

func pkOf(placeholder string) string {
	for _, k := range everyone {
		if placeholder == "$"+strings.ToUpper(k.name) {
			return k.pk
		}
	}
	return placeholder
}

// substitutions replaces $NAME with hex pubkeys and "$PROOF_DAVE",
// "$FORGED_DAVE", "$OFFLINE_DAVE" with fresh signed kind 30333 events.
func substitutions(t *testing.T) func(string) string {
	proof := heartbeatJSON(t, dave, "active", false)
	forged := heartbeatJSON(t, dave, "active", true)
	offline := heartbeatJSON(t, dave, "offline", false)
	return func(s string) string {
		s = strings.ReplaceAll(s, `"$PROOF_DAVE"`, proof)
		s = strings.ReplaceAll(s, `"$FORGED_DAVE"`, forged)
		s = strings.ReplaceAll(s, `"$OFFLINE_DAVE"`, offline)
		for _, k := range everyone {
			s = strings.ReplaceAll(s, "$"+strings.ToUpper(k.name), k.pk)
		}
		return s
	}
}

func heartbeatJSON(t *testing.T, k key, status string, forge bool) string {
	evt, err := directory.BuildHeartbeat(k.sk, directory.Status{Status: status, Capacity: 1, Capabilities: []string{"translation"},
		Card: &events.AgentCard{Name: "Dave"}}, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if forge {
		evt.Sig = strings.Repeat("0", 128)
	}
	b, _ := json.Marshal(evt)
	return string(b)
}

// roundTrip POSTs body and returns the status and the normalised body.
func roundTrip(t *testing.T, url string, body []byte) *response {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := &response{Status: resp.StatusCode, Body: json.RawMessage("null")}
	if len(bytes.TrimSpace(out)) > 0 {
		r.Body = json.RawMessage(normalise(string(out)))
	}
	return r
}

var (
	timeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	sigRE  = regexp.MustCompile(`\b[0-9a-f]{128}\b`)
	hexRE  = regexp.MustCompile(`\b[0-9a-f]{64}\b`)
)

// normalise makes a body stable: names for the test keys, <time> for
// timestamps, <hex> for event ids.
func normalise(s string) string {
	for _, k := range everyone {
		npub, _ := nip19.EncodePublicKey(k.pk)
		s = strings.ReplaceAll(s, npub, "$"+strings.ToUpper(k.name)+"_NPUB")
		s = strings.ReplaceAll(s, k.pk, "$"+strings.ToUpper(k.name))
	}
	s = timeRE.ReplaceAllString(s, "<time>")
	s = sigRE.ReplaceAllString(s, "<sig>")
	return hexRE.ReplaceAllString(s, "<hex>")
}

// indent is raw in one canonical form (decoded, re-encoded unescaped).
func indent(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	return string(bytes.TrimSpace(encode(v)))
}

func encode(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	return buf.Bytes()
}

func want(r *response) string {
	if r == nil {
		return "no response recorded"
	}
	return fmt.Sprintf("%d %s", r.Status, indent(r.Body))
}
