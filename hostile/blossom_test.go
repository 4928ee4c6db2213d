package hostile

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/blossom"
)

// The Blossom server faces strangers on the node's HTTP port: who may
// upload is an allow-list, and every upload, list and mirror is bounded.

// blobClient is a Blossom client of n signing with sk.
func blobClient(n *node, sk string) *blossom.Client {
	return &blossom.Client{BaseURL: "http://" + n.addr, SecretKey: sk, HTTP: &http.Client{Timeout: 2 * time.Minute}}
}

// putBytes uploads b.
func putBytes(c *blossom.Client, b []byte) (blossom.Descriptor, error) {
	h := sha256.Sum256(b)
	return c.Upload(context.Background(), bytes.NewReader(b), int64(len(b)), hex.EncodeToString(h[:]), "application/octet-stream")
}

// refusal is the status and reason of a Blossom refusal (0 if err is none).
func refusal(err error) (int, string) {
	var he *blossom.HTTPError
	if errors.As(err, &he) {
		return he.Status, he.Reason
	}
	return 0, ""
}

// blobCount is the number of blobs in the node's store.
func blobCount(t *testing.T, n *node) int {
	t.Helper()
	count := 0
	filepath.WalkDir(filepath.Join(n.data, "blobs", "data"), func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			count++
		}
		return nil
	})
	return count
}

func TestBlossom_strangersUploadIsRefusedByDefault(t *testing.T) {
	n := startNodeWith(t, nil)
	stranger := nostr.GeneratePrivateKey()
	_, err := putBytes(blobClient(n, stranger), []byte("a stranger's blob"))
	if code, reason := refusal(err); code != http.StatusForbidden || !strings.Contains(reason, "may not upload") {
		t.Fatalf("a stranger's upload: %v; want 403 with a reason", err)
	}
	req, _ := http.NewRequest(http.MethodPut, "http://"+n.addr+"/upload", strings.NewReader("no authorization"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("X-Reason") == "" {
		t.Fatalf("an upload without authorization: %d %q; want 401 with a reason", resp.StatusCode, resp.Header.Get("X-Reason"))
	}
	if got := blobCount(t, n); got != 0 {
		t.Fatalf("%d blobs stored after refused uploads", got)
	}

	// the owner of an agent of the node may upload
	ownerSK := nostr.GeneratePrivateKey()
	owner, _ := nostr.GetPublicKey(ownerSK)
	var def struct{ ID string }
	cliJSON(t, &def, "def", "publish", "--relay", n.url, "--key", nostr.GeneratePrivateKey(), "--title", "Files", "--json")
	var res struct{ Agent struct{ PubKey string } }
	cliJSON(t, &res, "agent", "install", def.ID, "--owner", owner, "--node", "http://"+n.addr, "--data", n.data, "--json")
	if _, err := putBytes(blobClient(n, ownerSK), []byte("the owner's blob")); err != nil {
		t.Fatalf("the owner's upload: %v", err)
	}
	if got := blobCount(t, n); got != 1 {
		t.Fatalf("%d blobs stored, want 1", got)
	}
}

func TestBlossom_boundsHold(t *testing.T) {
	n := startNodeWith(t, map[string]any{"blossom": map[string]any{"uploaders": "anyone", "max_blob_bytes": 1 << 20, "max_uploads": 1,
		"quota_blobs_per_uploader": 3}})
	sk := nostr.GeneratePrivateKey()
	c := blobClient(n, sk)

	// a blob over the bound, declared or streamed without a length
	if code, _ := refusal(oneUpload(t, c, 2<<20, true)); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a declared 2 MiB upload: %d, want 413", code)
	}
	if code, _ := refusal(oneUpload(t, c, 2<<20, false)); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a chunked 2 MiB upload: %d, want 413", code)
	}

	// a second upload while one is in flight is rate-limited: the slow one
	// is written by hand on a connection of its own (its headers, a declared
	// length and the first 64 KiB), so that the server has surely begun it.
	// The server may still be finishing an earlier request (the 413s above:
	// the client can read an answer before the handler is done), in which
	// case the slow one is itself refused 429: then it starts again.
	slow := bytes.Repeat([]byte("slow upload "), 40_000) // 480 kB, under the 1 MiB bound
	var conn net.Conn
	var err error
	for attempt := 0; ; attempt++ {
		if attempt == 20 {
			t.Fatal("20 slow uploads, and no second upload was refused while one was in flight")
		}
		conn = startSlowUpload(t, n, sk, slow)
		if err = waitForSlotTaken(c); err != nil {
			break
		}
		if early := answeredEarly(conn); early != "" {
			if !strings.HasPrefix(early, "429") {
				t.Fatalf("the slow upload was answered before it was finished: %s", early)
			}
			conn.Close()
			continue
		}
		conn.Close() // neither refused yet (a very busy machine): begin again
	}
	defer conn.Close()
	if code, reason := refusal(err); code != http.StatusTooManyRequests || !strings.HasPrefix(reason, "rate-limited:") {
		t.Fatalf("an upload while another holds the only slot: %v; want 429 rate-limited", err)
	}
	if out := finishSlowUpload(conn, slow[64<<10:]); !strings.HasPrefix(out, "200") {
		t.Fatalf("the slow upload, once finished: %s, want 200", out)
	}

	// quota: at most 3 blobs per uploader (the slow one is the first)
	for _, b := range []string{"two", "three"} {
		if _, err := putBytes(c, []byte(b)); err != nil {
			t.Fatalf("upload %q: %v", b, err)
		}
	}
	if code, _ := refusal(func() error { _, err := putBytes(c, []byte("four")); return err }()); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("the 4th blob of an uploader bounded to 3: %d, want 413", code)
	}

	// a list page is bounded whatever the client asks
	pk, _ := nostr.GetPublicKey(sk)
	resp, err := http.Get("http://" + n.addr + "/list/" + pk + "?limit=100000000")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("list: %v %v", resp, err)
	}
	resp.Body.Close()
	if !n.healthy() {
		t.Fatal("the node is not healthy after the attacks")
	}
}

// oneUpload uploads size bytes, with Content-Length or chunked.
func oneUpload(t *testing.T, c *blossom.Client, size int, declared bool) error {
	t.Helper()
	var body io.Reader = bytes.NewReader(make([]byte, size))
	if !declared {
		body = io.MultiReader(body) // hides the length: chunked
	}
	req, _ := http.NewRequest(http.MethodPut, c.BaseURL+"/upload", body)
	if !declared {
		req.ContentLength = -1
	}
	evt := blossom.AuthTemplate("upload", "big", time.Minute)
	evt.Sign(c.SecretKey)
	req.Header.Set("Authorization", blossom.AuthHeader(&evt))
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return nil
	}
	return &blossom.HTTPError{Status: resp.StatusCode, Reason: resp.Header.Get("X-Reason")}
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestBlossom_mirrorRefusesTheNodesOwnNetwork(t *testing.T) {
	n := startNodeWith(t, map[string]any{"blossom": map[string]any{"uploaders": "anyone"}})
	sk := nostr.GeneratePrivateKey()
	evt := blossom.AuthTemplate("upload", "mirror", time.Minute, sha("x"))
	evt.Sign(sk)
	// the node's own /healthz: a loopback address
	req, _ := http.NewRequest(http.MethodPut, "http://"+n.addr+"/mirror", strings.NewReader(`{"url":"http://`+n.addr+`/healthz"}`))
	req.Header.Set("Authorization", blossom.AuthHeader(&evt))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(resp.Header.Get("X-Reason"), "does not fetch from") {
		t.Fatalf("mirror of a loopback URL: %d %q; want 502 refused", resp.StatusCode, resp.Header.Get("X-Reason"))
	}
}

func TestBlossom_bigUploadStreamsToDisk(t *testing.T) {
	n := startNodeWith(t, map[string]any{"blossom": map[string]any{"uploaders": "anyone"}})
	c := blobClient(n, nostr.GeneratePrivateKey())
	before := n.rssBytes(t)
	const size = 64 << 20
	b := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	d, err := putBytes(c, b)
	if err != nil {
		t.Fatal(err)
	}
	if grew := n.rssBytes(t) - before; grew > size/2 {
		t.Fatalf("RSS grew by %d bytes for a %d-byte upload: the body is held in memory", grew, size)
	}
	var got bytes.Buffer
	if err := c.Get(context.Background(), d.SHA256, &got, size); err != nil || !bytes.Equal(got.Bytes(), b) {
		t.Fatalf("get the 64 MiB blob back: %v", err)
	}
}

// startSlowUpload begins a PUT /upload of body on a connection of its own:
// its headers and the first 64 KiB, the rest left for finishSlowUpload.
func startSlowUpload(t *testing.T, n *node, sk string, body []byte) net.Conn {
	t.Helper()
	evt := blossom.AuthTemplate("upload", "slow", time.Minute)
	evt.Sign(sk)
	conn, err := net.Dial("tcp", n.addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "PUT /upload HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nContent-Length: %d\r\n\r\n", n.addr, blossom.AuthHeader(&evt), len(body))
	if _, err := conn.Write(body[:64<<10]); err != nil {
		t.Fatal(err)
	}
	return conn
}

// waitForSlotTaken uploads a small blob (deleting it again) until an
// upload is refused, for at most 5 s; it returns that refusal, or nil.
func waitForSlotTaken(c *blossom.Client) error {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if _, err := putBytes(c, []byte("second")); err != nil {
			return err
		}
		c.Delete(context.Background(), sha("second"))
	}
	return nil
}

// answeredEarly is the status and reason the server already sent on conn
// ("" if none within a second).
func answeredEarly(conn net.Conn) string {
	conn.SetReadDeadline(time.Now().Add(time.Second))
	defer conn.SetReadDeadline(time.Time{})
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return ""
	}
	resp.Body.Close()
	return fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("X-Reason"))
}

// finishSlowUpload sends the rest of the body and reads the answer.
func finishSlowUpload(conn net.Conn, rest []byte) string {
	if _, err := conn.Write(rest); err != nil {
		return err.Error()
	}
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	return fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("X-Reason"))
}
