package relay

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// TestRelay_SurvivesHostileMessages sends malformed and hostile frames over
// a raw websocket; the relay must answer or ignore each one and keep serving.
// Every message here is one line a client can send: a crash would take the
// whole node down for everybody.
func TestRelay_SurvivesHostileMessages(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	conn, _, err := websocket.DefaultDialer.Dial(tr.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hostile := []string{
		`not json`, `[]`, `{}`, `["EVENT"]`, `["EVENT", 1]`, `["EVENT", {"kind": "x"}]`,
		`["REQ"]`, `["REQ", "s"]`, `["REQ", "s", {"limit": -1}]`, `["REQ", "s", {"limit": 99999999999}]`,
		`["REQ", "s", {"ids": ["abc"]}]`, `["REQ", "s", {"authors": ["zz"]}]`, `["REQ", "s", {"#p": ["x"]}]`,
		`["REQ", "s", {"#e": [""]}]`, `["REQ", "s", {"kinds": [-1, 70000]}]`, `["REQ", "s", {"since": -5, "until": -9}]`,
		`["REQ", "s", {"search": ""}]`, `["REQ", "s", {"search": "x", "limit": 100000}]`,
		`["COUNT"]`, `["COUNT", "c", {"kinds": [3], "#p": ["x"]}]`, `["COUNT", "c", {"kinds": [7], "#e": ["short"]}]`,
		`["COUNT", "c", {"ids": ["abc"]}]`, `["CLOSE"]`, `["CLOSE", 5]`, `["AUTH", {}]`, `["NEG-OPEN", "x"]`,
		`["REQ", "` + strings.Repeat("s", 5000) + `", {}]`,
		`["REQ", "s", ` + strings.Repeat(`{"kinds":[1]},`, 200) + `{}]`,
	}
	for _, msg := range hostile {
		if err := conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatalf("relay closed the connection after %q: %v", msg, err)
		}
	}
	// Still alive: a fresh client publishes and reads back.
	c := tr.connect(t)
	sk := nostr.GeneratePrivateKey()
	evt := signed(t, sk, 1, nil, "still here")
	mustPublish(t, c, evt)
	if got := queryWS(t, c, nostr.Filter{IDs: []string{evt.ID}}); len(got) != 1 {
		t.Fatal("relay stopped serving after hostile input")
	}
	// The raw connection also still gets answers.
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`["REQ","alive",{"ids":["`+evt.ID+`"]}]`)); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("no answer on the hostile connection: %v", err)
		}
		if strings.Contains(string(data), `"EOSE","alive"`) {
			return
		}
	}
}

// TestRelay_ManyClosesOnOneConnection sends more REQ+CLOSE pairs on one
// websocket than a connection may handle messages at once: every REQ must
// still get its EOSE (a CLOSE used to keep its handler slot for good, so
// the 65th REQ of a connection was never read).
func TestRelay_ManyClosesOnOneConnection(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{MaxConcurrentMessages: 4, RequestsPerSecond: -1})
	conn, _, err := websocket.DefaultDialer.Dial(tr.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i := range 20 {
		id := "s" + strconv.Itoa(i)
		if err := conn.WriteMessage(websocket.TextMessage, []byte(`["REQ","`+id+`",{"kinds":[1],"limit":1}]`)); err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				t.Fatalf("REQ %d: no EOSE: %v", i, err)
			}
			if strings.Contains(string(data), `"EOSE","`+id+`"`) {
				break
			}
		}
		if err := conn.WriteMessage(websocket.TextMessage, []byte(`["CLOSE","`+id+`"]`)); err != nil {
			t.Fatal(err)
		}
	}
}
