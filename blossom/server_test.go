package blossom_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/blossom"
)

// newServer runs a Blossom server over a store in a temp dir; only
// allowed may upload.
func newServer(t *testing.T, quota blossom.Quota, opt blossom.Options, allowed ...string) (*httptest.Server, *blossom.Store) {
	t.Helper()
	st, err := blossom.OpenStore(t.TempDir(), quota)
	if err != nil {
		t.Fatal(err)
	}
	opt.MayUpload = func(_ context.Context, pk string) bool {
		for _, a := range allowed {
			if a == pk {
				return true
			}
		}
		return false
	}
	srv := httptest.NewServer(blossom.NewServer(st, opt))
	t.Cleanup(srv.Close)
	return srv, st
}

func key(t *testing.T) (sk, pk string) {
	t.Helper()
	sk = nostr.GeneratePrivateKey()
	pk, _ = nostr.GetPublicKey(sk)
	return sk, pk
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func upload(t *testing.T, c *blossom.Client, b []byte) (blossom.Descriptor, error) {
	t.Helper()
	return c.Upload(context.Background(), bytes.NewReader(b), int64(len(b)), sum(b), "text/plain")
}

func status(err error) int {
	var he *blossom.HTTPError
	if errors.As(err, &he) {
		return he.Status
	}
	return 0
}

func TestServer_UploadGetListDelete(t *testing.T) {
	sk, pk := key(t)
	srv, st := newServer(t, blossom.Quota{}, blossom.Options{}, pk)
	c := &blossom.Client{BaseURL: srv.URL, SecretKey: sk}
	body := []byte("hello blossom")
	d, err := upload(t, c, body)
	if err != nil {
		t.Fatal(err)
	}
	if d.SHA256 != sum(body) || d.Size != int64(len(body)) || !strings.HasPrefix(d.URL, srv.URL+"/"+d.SHA256) {
		t.Fatalf("descriptor %+v", d)
	}
	onDisk, err := os.ReadFile(filepath.Join(st.Dir(), "data", d.SHA256[:2], d.SHA256))
	if err != nil || !bytes.Equal(onDisk, body) {
		t.Fatalf("on disk %q, %v", onDisk, err)
	}
	var got bytes.Buffer
	if err := c.Get(context.Background(), d.SHA256, &got, 1<<20); err != nil || got.String() != string(body) {
		t.Fatalf("get %q, %v", got.String(), err)
	}
	resp, err := http.Get(srv.URL + "/" + d.SHA256 + ".html")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("a blob served as .html runs on the node's origin: CSP %q", csp)
	}
	list, err := c.List(context.Background(), pk, 10)
	if err != nil || len(list) != 1 || list[0].SHA256 != d.SHA256 {
		t.Fatalf("list %+v, %v", list, err)
	}
	if err := c.Delete(context.Background(), d.SHA256); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), d.SHA256, &got, 1<<20); status(err) != http.StatusNotFound {
		t.Fatalf("get after delete: %v, want 404", err)
	}
	if _, err := os.Stat(filepath.Join(st.Dir(), "data", d.SHA256[:2], d.SHA256)); !os.IsNotExist(err) {
		t.Fatalf("blob still on disk after its only holder deleted it: %v", err)
	}
}

func TestServer_StrangerRefused(t *testing.T) {
	_, pk := key(t)
	srv, _ := newServer(t, blossom.Quota{}, blossom.Options{}, pk)
	strangerSK, _ := key(t)
	_, err := upload(t, &blossom.Client{BaseURL: srv.URL, SecretKey: strangerSK}, []byte("spam"))
	var he *blossom.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusForbidden || !strings.Contains(he.Reason, "may not upload") {
		t.Fatalf("stranger's upload: %v, want 403 with a reason", err)
	}
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/upload", strings.NewReader("x"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("X-Reason") == "" {
		t.Fatalf("upload without authorization: %d %q, want 401 with a reason", resp.StatusCode, resp.Header.Get("X-Reason"))
	}
}

func TestServer_Bounds(t *testing.T) {
	sk, pk := key(t)
	srv, _ := newServer(t, blossom.Quota{BytesPerUploader: 100, BlobsPerUploader: 2}, blossom.Options{MaxBlobBytes: 64}, pk)
	c := &blossom.Client{BaseURL: srv.URL, SecretKey: sk}
	if _, err := upload(t, c, bytes.Repeat([]byte("a"), 65)); status(err) != http.StatusRequestEntityTooLarge {
		t.Fatalf("blob over the size bound: %v, want 413", err)
	}
	for i := range 2 {
		if _, err := upload(t, c, bytes.Repeat([]byte{'b' + byte(i)}, 40)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := upload(t, c, []byte("third")); status(err) != http.StatusRequestEntityTooLarge {
		t.Fatalf("upload past the quota: %v, want 413", err)
	}
	body := []byte("tampered")
	_, err := c.Upload(context.Background(), bytes.NewReader(body), int64(len(body)), sum([]byte("other")), "text/plain")
	if status(err) != http.StatusConflict {
		t.Fatalf("upload whose bytes do not match the x tag: %v, want 409", err)
	}
}

func TestServer_UploadCheck(t *testing.T) {
	sk, pk := key(t)
	srv, _ := newServer(t, blossom.Quota{}, blossom.Options{MaxBlobBytes: 1000}, pk)
	check := func(size string, signer string) int {
		req, _ := http.NewRequest(http.MethodHead, srv.URL+"/upload", nil)
		req.Header.Set("X-Content-Length", size)
		evt := blossom.AuthTemplate("upload", "check", 60e9)
		evt.Sign(signer)
		req.Header.Set("Authorization", blossom.AuthHeader(&evt))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	stranger, _ := key(t)
	if got := check("10", sk); got != http.StatusOK {
		t.Errorf("allowed uploader, small blob: %d, want 200", got)
	}
	if got := check("1001", sk); got != http.StatusRequestEntityTooLarge {
		t.Errorf("allowed uploader, blob too large: %d, want 413", got)
	}
	if got := check("10", stranger); got != http.StatusForbidden {
		t.Errorf("stranger: %d, want 403", got)
	}
}
