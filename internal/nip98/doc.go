// Package nip98 is the node's one NIP-98 HTTP authorization check: an
// "Authorization: Nostr <base64 event>" header carrying a signed
// kind-27235 event that names the request's URL ("u"), method ("method")
// and, for a body, its SHA-256 ("payload"), created within Window of now,
// each event used once (Replay, bounded).
//
// The relay's NIP-86 management binds the body and remembers events itself:
//
//	body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
//	pubkey, id, err := nip98.Verify(r, "https://relay.example/", body, time.Now())
//	if err != nil { // errors.Is(err, nip98.ErrUnauthorized)
//		http.Error(w, err.Error(), http.StatusUnauthorized)
//	}
//	err = seen.Use(id, now) // ErrReplay, or ErrBusy when full
//
// The web console's owner sign-in and the consent API use a Guard:
//
//	g := nip98.NewGuard(nil)
//	pubkey, err := g.VerifyFor(r, ownsAnAgent) // only admitted keys are remembered
//
// The node only verifies these headers; tests build them with
// internal/testkit.NIP98Header.
package nip98
