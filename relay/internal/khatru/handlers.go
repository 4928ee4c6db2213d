package khatru

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip42"
	"github.com/nbd-wtf/go-nostr/nip45/hyperloglog"
	"github.com/nbd-wtf/go-nostr/nip70"
	"github.com/nbd-wtf/go-nostr/nip77"
	"github.com/rs/cors"
)

// ServeHTTP implements http.Handler interface.
func (rl *Relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	corsMiddleware := cors.New(cors.Options{
		AllowedOrigins: []string{"*"},
		AllowedMethods: []string{
			http.MethodHead,
			http.MethodGet,
			http.MethodPost,
			http.MethodPut,
			http.MethodPatch,
			http.MethodDelete,
		},
		AllowedHeaders: []string{"Authorization", "*"},
		MaxAge:         86400,
	})

	if r.Header.Get("Upgrade") == "websocket" {
		rl.HandleWebsocket(w, r)
	} else if r.Header.Get("Accept") == "application/nostr+json" {
		corsMiddleware.Handler(http.HandlerFunc(rl.HandleNIP11)).ServeHTTP(w, r)
	} else if r.Header.Get("Content-Type") == "application/nostr+json+rpc" {
		corsMiddleware.Handler(http.HandlerFunc(rl.HandleNIP86)).ServeHTTP(w, r)
	} else {
		corsMiddleware.Handler(rl.serveMux).ServeHTTP(w, r)
	}
}

func (rl *Relay) HandleWebsocket(w http.ResponseWriter, r *http.Request) {
	for _, reject := range rl.RejectConnection {
		if reject(r) {
			w.WriteHeader(429) // Too many requests
			return
		}
	}

	// PATCH (agentnode): AdmitConnection may refuse the connection with a
	// status and a reason before the upgrade; its release runs once the
	// connection ends (or the upgrade fails).
	release := func() {}
	if rl.AdmitConnection != nil {
		var status int
		var reason string
		if release, status, reason = rl.AdmitConnection(r); status != 0 {
			w.Header().Set("Connection", "close")
			http.Error(w, reason, status)
			return
		}
	}

	conn, err := rl.upgrader.Upgrade(w, r, nil)
	if err != nil {
		release()
		rl.Log.Printf("failed to upgrade websocket: %v\n", err)
		return
	}

	// NIP-42 challenge
	challenge := make([]byte, 8)
	rand.Read(challenge)

	ws := &WebSocket{
		conn:      conn,
		relay:     rl,
		out:       &outbox{},
		inflight:  make(chan struct{}, max(rl.MaxConcurrentMessages, 1)),
		queries:   make(chan struct{}, max(rl.MaxConcurrentQueries, 1)),
		Request:   r,
		Challenge: hex.EncodeToString(challenge),
	}
	ws.Context, ws.cancel = context.WithCancel(context.Background())
	// PATCH (agentnode): every write goes through the outbox; control
	// frames the client asks for are queued too, never written inline.
	conn.SetPingHandler(func(data string) error { ws.WriteMessage(websocket.PongMessage, []byte(data)); return nil })
	// The reply to a client's close frame is written at once, as upstream's
	// default handler does: the connection ends right after this returns.
	// One Write of a whole frame cannot interleave with the writer's.
	conn.SetCloseHandler(func(code int, text string) error {
		if code == websocket.CloseNoStatusReceived {
			code = websocket.CloseNormalClosure
		}
		conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(time.Second))
		return nil
	})

	rl.clientsMutex.Lock()
	rl.clients[ws] = make([]listenerSpec, 0, 2)
	rl.clientsMutex.Unlock()

	ctx, cancel := context.WithCancel(
		context.WithValue(
			context.Background(),
			wsKey, ws,
		),
	)

	// PATCH (agentnode): pings are queued by a timer, not by a goroutine
	// per connection (an idle connection holds only its reader).
	pinger := ws.startPinger(rl.PingPeriod)

	kill := func() {
		for _, ondisconnect := range rl.OnDisconnect {
			ondisconnect(ctx)
		}

		pinger.Stop()
		cancel()
		ws.cancel()
		ws.conn.Close()

		rl.removeClientAndListeners(ws)
		release()
	}

	go func() {
		defer kill()

		ws.conn.SetReadLimit(rl.MaxMessageSize)
		ws.conn.SetReadDeadline(time.Now().Add(rl.PongWait))
		ws.conn.SetPongHandler(func(string) error {
			ws.conn.SetReadDeadline(time.Now().Add(rl.PongWait))
			return nil
		})

		for _, onconnect := range rl.OnConnect {
			onconnect(ctx)
		}

		smp := nostr.NewMessageParser()

		for {
			typ, msgb, err := ws.conn.ReadMessage()
			if err != nil {
				if websocket.IsUnexpectedCloseError(
					err,
					websocket.CloseNormalClosure,    // 1000
					websocket.CloseGoingAway,        // 1001
					websocket.CloseNoStatusReceived, // 1005
					websocket.CloseAbnormalClosure,  // 1006
					4537,                            // some client seems to send many of these
				) {
					rl.Log.Printf("unexpected close error from %s: %v\n", GetIPFromRequest(r), err)
				}
				ws.cancel()
				return
			}

			if typ == websocket.PingMessage {
				ws.WriteMessage(websocket.PongMessage, nil)
				continue
			}

			// PATCH (agentnode): at most MaxConcurrentMessages handlers per
			// connection; beyond that the reader waits (TCP backpressure)
			// instead of spawning a goroutine per pipelined message.
			select {
			case ws.inflight <- struct{}{}:
			case <-ws.Context.Done():
				return
			}

			// this is safe because ReadMessage() will always create a new slice
			message := unsafe.String(unsafe.SliceData(msgb), len(msgb))

			// parse messages sequentially otherwise sonic breaks
			envelope, err := smp.ParseMessage(message)

			// PATCH (agentnode): CLOSE is handled here, in order, so that a
			// REQ sent after it finds the subscription gone (the handlers
			// below run concurrently).
			// It gives its handler slot back at once (it held one for
			// good before: after MaxConcurrentMessages CLOSEs the
			// connection's reader waited forever).
			if env, ok := envelope.(*nostr.CloseEnvelope); ok && err == nil {
				rl.removeListenerId(ws, string(*env))
				<-ws.inflight
				continue
			}

			// PATCH (agentnode): NEG-CLOSE is handled here too, in the
			// order it came (PATCHES.md 18): run in its own goroutine it
			// could end the session a NEG-OPEN of the same id sent right
			// after it had just opened.
			if err == nostr.UnknownLabel && rl.Negentropy {
				if env, ok := nip77.ParseNegMessage(message).(*nip77.CloseEnvelope); ok {
					rl.closeNegSession(ws, env.SubscriptionID)
					<-ws.inflight
					continue
				}
			}

			// PATCH (agentnode): a REQ's listeners are registered here, in
			// order (PATCHES.md 19, registerReq); its stored events are sent
			// from a goroutine like the other handlers.
			if env, ok := envelope.(*nostr.ReqEnvelope); ok && err == nil {
				reg, ok := rl.registerReq(ctx, ws, env)
				if !ok {
					<-ws.inflight
					continue
				}
				go func() {
					defer func() { <-ws.inflight }()
					rl.runReq(ctx, ws, env, reg)
				}()
				continue
			}

			// then delegate to the goroutine
			go func(message string) {
				defer func() { <-ws.inflight }()
				if err != nil {
					if err == nostr.UnknownLabel && rl.Negentropy {
						envelope = nip77.ParseNegMessage(message)
					}
					if envelope == nil {
						ws.WriteJSON(nostr.NoticeEnvelope("failed to parse envelope: " + err.Error()))
						return
					}
				}

				switch env := envelope.(type) {
				case *nostr.EventEnvelope:
					// PATCH (agentnode): OnPublishDone times EVENT -> OK.
					published := time.Now()
					// check id
					if !env.Event.CheckID() {
						ws.WriteJSON(nostr.OKEnvelope{EventID: env.Event.ID, OK: false, Reason: "invalid: id is computed incorrectly"})
						return
					}

					// check signature
					if ok, err := env.Event.CheckSignature(); err != nil {
						ws.WriteJSON(nostr.OKEnvelope{EventID: env.Event.ID, OK: false, Reason: "error: failed to verify signature"})
						return
					} else if !ok {
						ws.WriteJSON(nostr.OKEnvelope{EventID: env.Event.ID, OK: false, Reason: "invalid: signature is invalid"})
						return
					}

					// check NIP-70 protected
					if nip70.IsProtected(env.Event) {
						authed := GetAuthed(ctx)
						if authed == "" {
							RequestAuth(ctx)
							ws.WriteJSON(nostr.OKEnvelope{
								EventID: env.Event.ID,
								OK:      false,
								Reason:  "auth-required: must be published by authenticated event author",
							})
							return
						} else if authed != env.Event.PubKey {
							ws.WriteJSON(nostr.OKEnvelope{
								EventID: env.Event.ID,
								OK:      false,
								Reason:  "blocked: must be published by event author",
							})
							return
						}
					} else if nip70.HasEmbeddedProtected(env.Event) {
						ws.WriteJSON(nostr.OKEnvelope{
							EventID: env.Event.ID,
							OK:      false,
							Reason:  "blocked: can't repost nip70 protected",
						})
						return
					}

					srl := rl
					if rl.getSubRelayFromEvent != nil {
						srl = rl.getSubRelayFromEvent(&env.Event)
					}

					var ok bool
					var writeErr error
					var skipBroadcast bool

					if env.Event.Kind == 5 {
						// this always returns "blocked: " whenever it returns an error
						writeErr = srl.handleDeleteRequest(ctx, &env.Event)
					}

					if writeErr == nil {
						if nostr.IsEphemeralKind(env.Event.Kind) {
							// this will also always return a prefixed reason
							writeErr = srl.handleEphemeral(ctx, &env.Event)
						} else {
							// this will also always return a prefixed reason
							skipBroadcast, writeErr = srl.handleNormal(ctx, &env.Event)
						}
					}

					var reason string
					if writeErr == nil {
						ok = true
						for _, ovw := range srl.OverwriteResponseEvent {
							ovw(ctx, &env.Event)
						}
						if !skipBroadcast {
							n := srl.notifyListeners(&env.Event)

							// the number of notified listeners matters in ephemeral events
							if nostr.IsEphemeralKind(env.Event.Kind) {
								if n == 0 && len(rl.OnEphemeralEvent) == 0 {
									ok = false
									reason = "mute: no one was listening for this"
								} else {
									reason = "broadcasted to " + strconv.Itoa(n) + " listeners"
								}
							}
						}
					} else {
						ok = false
						reason = writeErr.Error()
						if strings.HasPrefix(reason, "auth-required:") {
							RequestAuth(ctx)
						}
					}
					ws.WriteJSON(nostr.OKEnvelope{EventID: env.Event.ID, OK: ok, Reason: reason})
					for _, done := range rl.OnPublishDone {
						done(ok, time.Since(published))
					}
				case *nostr.CountEnvelope:
					if rl.CountEvents == nil && rl.CountEventsHLL == nil {
						ws.WriteJSON(nostr.ClosedEnvelope{SubscriptionID: env.SubscriptionID, Reason: "unsupported: this relay does not support NIP-45"})
						return
					}

					if reason := rl.rejectRequest(ctx, ws, "", nostr.Filters{env.Filter}); reason != "" {
						ws.WriteJSON(nostr.ClosedEnvelope{SubscriptionID: env.SubscriptionID, Reason: reason})
						return
					}
					if !ws.acquireQuery() {
						return
					}
					defer ws.releaseQuery()

					var total int64
					var hll *hyperloglog.HyperLogLog

					srl := rl
					if rl.getSubRelayFromFilter != nil {
						srl = rl.getSubRelayFromFilter(env.Filter)
					}

					// PATCH (agentnode): the offset is a hook's (HyperLogLogOffset).
					if offset := srl.hyperLogLogOffset(env.Filter); offset != -1 {
						total, hll = srl.handleCountRequestWithHLL(ctx, ws, env.Filter, offset)
					} else {
						total = srl.handleCountRequest(ctx, ws, env.Filter)
					}

					resp := nostr.CountEnvelope{
						SubscriptionID: env.SubscriptionID,
						Count:          &total,
					}
					if hll != nil {
						resp.HyperLogLog = hll.GetRegisters()
					}

					ws.WriteJSON(resp)

				case *nostr.CloseEnvelope:
					id := string(*env)
					rl.removeListenerId(ws, id)
				case *nostr.AuthEnvelope:
					wsBaseUrl := strings.Replace(rl.getBaseURL(r), "http", "ws", 1)
					if pubkey, ok := nip42.ValidateAuthEvent(&env.Event, ws.Challenge, wsBaseUrl); ok {
						ws.AuthedPublicKey = pubkey
						ws.authLock.Lock()
						if ws.Authed != nil {
							close(ws.Authed)
							ws.Authed = nil
						}
						ws.authLock.Unlock()
						ws.WriteJSON(nostr.OKEnvelope{EventID: env.Event.ID, OK: true})
					} else {
						ws.WriteJSON(nostr.OKEnvelope{EventID: env.Event.ID, OK: false, Reason: "error: failed to authenticate"})
					}
				// PATCH (agentnode): bounded NIP-77 sessions (negentropy.go).
				case *nip77.OpenEnvelope:
					rl.handleNegOpen(ctx, ws, env)
				case *nip77.MessageEnvelope:
					rl.handleNegMsg(ctx, ws, env)
				case *nip77.CloseEnvelope:
					rl.closeNegSession(ws, env.SubscriptionID)
				}
			}(message)
		}
	}()
}
