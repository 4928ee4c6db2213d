package jsonrpc_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

func dialWS(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return conn
}

func send(t *testing.T, conn *websocket.Conn, msg string) {
	t.Helper()
	if err := conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

func receive(t *testing.T, conn *websocket.Conn) string {
	t.Helper()
	_, b, err := conn.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServer_ServeHTTP_websocket(t *testing.T) {
	srv := httptest.NewServer(newTestServer(0))
	defer srv.Close()
	conn := dialWS(t, srv.URL)

	send(t, conn, `{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":1}`)
	if got, want := receive(t, conn), `{"jsonrpc":"2.0","id":1,"result":3}`; got != want {
		t.Errorf("request: got %s, want %s", got, want)
	}
	// A notification gets no frame: the next frame answers the next request.
	send(t, conn, `{"jsonrpc":"2.0","method":"echo","params":["ignored"]}`)
	send(t, conn, `[{"jsonrpc":"2.0","method":"sum","params":{"a":2,"b":3},"id":"b"},{"jsonrpc":"2.0","method":"nope","id":2}]`)
	want := `[{"jsonrpc":"2.0","id":"b","result":5},{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found"}}]`
	if got := receive(t, conn); got != want {
		t.Errorf("batch after notification: got %s, want %s", got, want)
	}
	send(t, conn, `{"jsonrpc":"2.0",`)
	if got, want := receive(t, conn), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`; got != want {
		t.Errorf("parse error: got %s, want %s", got, want)
	}
}

func TestServer_ServeHTTP_websocketFrameLimit(t *testing.T) {
	srv := httptest.NewServer(newTestServer(64))
	defer srv.Close()
	conn := dialWS(t, srv.URL)
	send(t, conn, `{"jsonrpc":"2.0","method":"echo","params":["`+strings.Repeat("x", 100)+`"],"id":1}`)
	_, _, err := conn.ReadMessage()
	if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Fatalf("oversized frame: got %v, want close 1009", err)
	}
}
