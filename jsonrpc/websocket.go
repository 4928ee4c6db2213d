package jsonrpc

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
)

func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// serveWS upgrades r and serves one JSON-RPC message (request or batch)
// per text frame until the peer closes or the request's context ends.
// Requests on one connection run one after another, in order; a frame
// larger than MaxRequestBytes closes the connection with 1009.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{CheckOrigin: s.opts.CheckOrigin}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	defer conn.Close()
	conn.SetReadLimit(s.opts.MaxRequestBytes)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() { // owned: ends when ctx ends (read loop exit or request end)
		defer wg.Done()
		<-ctx.Done()
		_ = conn.Close() // unblocks ReadMessage
	}()
	s.readLoop(ctx, conn)
}

func (s *Server) readLoop(ctx context.Context, conn *websocket.Conn) {
	for {
		typ, msg, err := conn.ReadMessage()
		if err != nil {
			if errors.Is(err, websocket.ErrReadLimit) {
				_ = conn.WriteControl(websocket.CloseMessage,
					websocket.FormatCloseMessage(websocket.CloseMessageTooBig, "too large"), time.Now().Add(time.Second))
			}
			return
		}
		if typ != websocket.TextMessage {
			continue
		}
		if out := s.Handle(ctx, msg); out != nil {
			if err := conn.WriteMessage(websocket.TextMessage, out); err != nil {
				return
			}
		}
	}
}
