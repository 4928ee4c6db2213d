package hostile

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// nostrLogin posts to the console's owner sign-in with the header
// "Authorization: <auth>" and returns the status, the body and whether a
// session cookie came back.
func nostrLogin(n *node, auth string) (int, string, bool, error) {
	req, _ := http.NewRequest("POST", "http://"+n.addr+"/console/nostr-login", nil)
	req.Header.Set("Authorization", auth)
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", false, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b), resp.Header.Get("Set-Cookie") != "", nil
}

// nip98Header is a NIP-98 header signed by sk for POST url.
func nip98Header(t *testing.T, sk, url, content string) string {
	t.Helper()
	evt := nostr.Event{Kind: 27235, CreatedAt: nostr.Now(), Content: content, Tags: nostr.Tags{{"u", url}, {"method", "POST"}}}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(evt)
	return "Nostr " + base64.StdEncoding.EncodeToString(raw)
}

// Strangers hammer the owners' sign-in (POST /console/nostr-login) with
// 4,000 well-signed NIP-98 events of keys that own nothing here (more than
// the replay memory holds), 64 kB headers, garbage and replays. Each gets a
// specific refusal (403 "no agent on this node names this key as its
// owner", 401 naming what is malformed), none gets a session, the node
// stays healthy and its memory bounded, and a refused key's event is
// refused the same way when replayed (nothing of a stranger is kept).
func TestOwnerSignIn_strangersGetRefusalsAndNoSessions(t *testing.T) {
	const rssBound = 128 << 20
	n := startNode(t, nil)
	url := "http://" + n.addr + "/console/nostr-login"
	before := n.rssBytes(t)
	type kind struct {
		auth   func(i int) string
		status int
		reason *regexp.Regexp
	}
	strangerSK := nostr.GeneratePrivateKey()
	replayed := nip98Header(t, strangerSK, url, "replayed")
	kinds := []kind{
		{func(i int) string { return nip98Header(t, strangerSK, url, fmt.Sprint(i)) }, http.StatusForbidden,
			regexp.MustCompile(`no agent on this node names this key as its owner: npub1`)},
		{func(int) string { return replayed }, http.StatusForbidden, regexp.MustCompile(`no agent on this node names this key`)},
		{func(int) string { return "Nostr " + strings.Repeat("A", 64<<10) }, http.StatusUnauthorized, regexp.MustCompile(`malformed NIP-98 authorization: longer than 4096 bytes`)},
		{func(int) string { return "Nostr not-base64!" }, http.StatusUnauthorized, regexp.MustCompile(`malformed NIP-98 authorization: not base64`)},
		{func(int) string {
			return nip98Header(t, strangerSK, "http://elsewhere.example/console/nostr-login", "x")
		}, http.StatusUnauthorized,
			regexp.MustCompile(`u\\" tag is not this URL`)},
	}
	const total, workers = 6000, 16
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < total; i += workers {
				k := kinds[i%len(kinds)]
				if i%len(kinds) == 0 && i%3 == 0 { // fresh strangers too, not only one key
					k.auth = func(i int) string { return nip98Header(t, nostr.GeneratePrivateKey(), url, fmt.Sprint(i)) }
				}
				status, body, session, err := nostrLogin(n, k.auth(i))
				if err == nil && (status != k.status || !k.reason.MatchString(body) || session) {
					err = fmt.Errorf("request %d: %d %q (session cookie %v), want %d matching %s", i, status, body, session, k.status, k.reason)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if !n.healthy() {
		t.Fatal("the node is not healthy after the sign-in flood")
	}
	if after := n.rssBytes(t); after-before > rssBound {
		t.Errorf("RSS grew by %d MiB during the flood, bound %d MiB", (after-before)>>20, rssBound>>20)
	}
}

// A lesson with 300 comments of 20 kB each: its page lists the newest 50,
// each cut, and stays small.
func TestLessonPage_manyCommentsAreBounded(t *testing.T) {
	n := startNode(t, map[string]any{"events_per_second": -1})
	author := nostr.GeneratePrivateKey()
	authorPK, _ := nostr.GetPublicKey(author)
	def := signed(t, author, nostr.Now()-100, 4199, nostr.Tags{{"title", "target"}}, "")
	lesson := signed(t, author, nostr.Now()-90, 4129, nostr.Tags{{"e", def.ID}, {"title", "a lesson"}}, "text")
	evts := []*nostr.Event{def, lesson}
	body := strings.Repeat("comment ", 2500)
	for i := range 300 {
		evts = append(evts, signed(t, nostr.GeneratePrivateKey(), nostr.Now()-80+nostr.Timestamp(i%60), 1111,
			nostr.Tags{{"E", lesson.ID, "", authorPK}, {"K", "4129"}, {"P", authorPK}, {"e", lesson.ID, "", authorPK}, {"k", "4129"}, {"p", authorPK}},
			fmt.Sprint(i, body)))
	}
	publishAllTo(t, n, evts)
	page := getBody(t, "http://"+n.addr+"/lessons/"+lesson.ID)
	if got := strings.Count(page, `<article class="comment"`); got != 50 {
		t.Errorf("the lesson page lists %d comments, want the newest 50", got)
	}
	if !strings.Contains(page, "The newest 50 comments are shown.") {
		t.Error("the lesson page does not say that older comments are not shown")
	}
	if len(page) > 150_000 {
		t.Errorf("the lesson page is %d bytes", len(page))
	}
}

// The consent API takes owners' NIP-98 too: a stranger's well-signed
// request is 403 "no agent on this node names this key", an oversized
// header 401, and neither sees a consent request.
func TestConsentAPI_strangersNIP98IsRefused(t *testing.T) {
	n := startNode(t, nil)
	url := "http://" + n.addr + "/api/consent"
	for i := range 200 {
		auth, want, reason := nip98Get(t, nostr.GeneratePrivateKey(), url, fmt.Sprint(i)), http.StatusForbidden, "no agent on this node names this key"
		if i%2 == 1 {
			auth, want, reason = "Nostr "+strings.Repeat("A", 64<<10), http.StatusUnauthorized, "longer than 4096 bytes"
		}
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", auth)
		c := http.Client{Timeout: 30 * time.Second}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode != want || !strings.Contains(string(b), reason) || strings.Contains(string(b), "approvals") {
			t.Fatalf("request %d: %d %s, want %d with %q", i, resp.StatusCode, b, want, reason)
		}
	}
	if !n.healthy() {
		t.Fatal("the node is not healthy")
	}
}

// nip98Get is a NIP-98 header signed by sk for GET url.
func nip98Get(t *testing.T, sk, url, content string) string {
	t.Helper()
	evt := nostr.Event{Kind: 27235, CreatedAt: nostr.Now(), Content: content, Tags: nostr.Tags{{"u", url}, {"method", "GET"}}}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(evt)
	return "Nostr " + base64.StdEncoding.EncodeToString(raw)
}
