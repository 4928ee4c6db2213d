// Package nip98 checks NIP-98 HTTP authorization: an "Authorization: Nostr
// <base64 event>" header carrying a signed kind-27235 event that names the
// request's URL ("u"), method ("method") and, for a body, its SHA-256
// ("payload"), created within a short window of now.
//
//	body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
//	pubkey, err := nip98.Verify(r, "https://relay.example/", body, time.Now())
//	if err != nil { // errors.Is(err, nip98.ErrUnauthorized)
//		http.Error(w, err.Error(), http.StatusUnauthorized)
//	}
//
// Header builds the header a client sends (tests, the CLI).
package nip98
