package blossom_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/blossom"
)

// The figures of docs/BLOSSOM.md: a 50 MB blob uploaded and downloaded
// through a real loopback socket, against `cp` of the same file on the
// same disk (BLOSSOM_BENCH_DIR, default a temp dir).
//
//	go test -run '^$' -bench . -benchtime 5x ./blossom/

const benchSize = 50 << 20

// benchDir is where the benchmark's files and store live.
func benchDir(b *testing.B) string {
	if d := os.Getenv("BLOSSOM_BENCH_DIR"); d != "" {
		dir, err := os.MkdirTemp(d, "bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	return b.TempDir()
}

// benchFile writes a 50 MB file of pseudo-random bytes.
func benchFile(b *testing.B, dir string) string {
	p := filepath.Join(dir, "src.bin")
	buf := make([]byte, benchSize)
	for i := range buf {
		buf[i] = byte(i*7919 + i>>13)
	}
	if err := os.WriteFile(p, buf, 0o600); err != nil {
		b.Fatal(err)
	}
	return p
}

// benchServer is a server allowing anyone, storing in dir.
func benchServer(b *testing.B, dir string) *blossom.Client {
	st, err := blossom.OpenStore(filepath.Join(dir, "store"), blossom.Quota{})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(blossom.NewServer(st, blossom.Options{}))
	b.Cleanup(srv.Close)
	return &blossom.Client{BaseURL: srv.URL, SecretKey: nostr.GeneratePrivateKey()}
}

func BenchmarkUpload50MB(b *testing.B) {
	dir := benchDir(b)
	src := benchFile(b, dir)
	c := benchServer(b, dir)
	b.SetBytes(benchSize)
	for b.Loop() {
		d, err := c.UploadFile(context.Background(), src, "application/octet-stream")
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := c.Delete(context.Background(), d.SHA256); err != nil { // the next upload writes again
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

func BenchmarkDownload50MB(b *testing.B) {
	dir := benchDir(b)
	src := benchFile(b, dir)
	c := benchServer(b, dir)
	d, err := c.UploadFile(context.Background(), src, "application/octet-stream")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(benchSize)
	for b.Loop() {
		f, err := os.Create(filepath.Join(dir, "dst.bin"))
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Get(context.Background(), d.SHA256, f, benchSize); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkCp50MB is `cp` of the file on the same disk; BenchmarkCpSync50MB
// adds the fsync the store makes (cp, then sync of the copy).
func BenchmarkCp50MB(b *testing.B)     { benchCp(b, false) }
func BenchmarkCpSync50MB(b *testing.B) { benchCp(b, true) }

func benchCp(b *testing.B, sync bool) {
	dir := benchDir(b)
	src := benchFile(b, dir)
	dst := filepath.Join(dir, "copy.bin")
	b.SetBytes(benchSize)
	for b.Loop() {
		os.Remove(dst)
		if out, err := exec.Command("cp", src, dst).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v %s", err, out)
		}
		if sync {
			f, err := os.Open(dst)
			if err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	}
}
