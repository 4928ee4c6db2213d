package main

import (
	"context"
	"flag"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/blossom"
	"github.com/agentnode/agentnode/events"
)

// maxGetBytes bounds `file get` (a blob larger than any node's default).
const maxGetBytes = 1 << 30

// fileFlags are the flags of every file subcommand.
type fileFlags struct {
	server  string
	key     *keyFlag
	timeout time.Duration
	json    bool
}

func (m *Main) fileFlagSet(name, usage string, f *fileFlags) *flag.FlagSet {
	fs := m.newFlagSet("file "+name, usage)
	fs.StringVar(&f.server, "server", m.envOr("AGENTNODE_BLOSSOM", m.envOr("AGENTNODE_NODE", DefaultNode)), "the Blossom server's http(s) URL (env AGENTNODE_BLOSSOM, else AGENTNODE_NODE: the node's)")
	f.key = addKeyFlag(fs, "key", "AGENTNODE_KEY", "signing")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "bound on the whole command")
	fs.BoolVar(&f.json, "json", false, "print JSON")
	return fs
}

// client is a Blossom client of --server, signing with --key when
// needsKey.
func (f *fileFlags) client(m *Main, cmd string, needsKey bool) (*blossom.Client, error) {
	u, err := url.Parse(f.server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("%s: --server %q: want http(s)://host:port", cmd, f.server)
	}
	c := &blossom.Client{BaseURL: strings.TrimRight(f.server, "/"), HTTP: &http.Client{}}
	if needsKey {
		sk, err := f.key.secret(m, cmd)
		if err != nil {
			return nil, err
		}
		c.SecretKey = sk
	}
	return c, nil
}

// parseFileFlags parses args into a flag set of fileFlags.
func (m *Main) parseFileFlags(name, usage string, args []string) (*fileFlags, []string, error) {
	f := &fileFlags{}
	fs := m.fileFlagSet(name, usage, f)
	pos, err := parseArgs(fs, args) // flags may follow the arguments
	if err != nil {
		return nil, nil, err
	}
	return f, pos, nil
}

// runFilePut: file put PATH...
func runFilePut(ctx context.Context, m *Main, args []string) error {
	const cmd = "file put"
	f, pos, err := m.parseFileFlags("put", "file put [--server URL] [--key NSEC] [--json] PATH...", args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("%s: want one or more files", cmd)
	}
	c, err := f.client(m, cmd, true)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	var out []blossom.Descriptor
	for _, p := range pos {
		d, err := c.UploadFile(ctx, p, typeOf(p))
		if err != nil {
			return fmt.Errorf("%s: %s: %w", cmd, p, err)
		}
		out = append(out, d)
		if !f.json {
			fmt.Fprintf(m.Stdout, "%s  %d bytes  %s\n  %s\n", d.SHA256, d.Size, p, d.URL)
		}
	}
	if f.json {
		return writeJSON(m.Stdout, out)
	}
	return nil
}

// typeOf is a file's MIME type from its extension.
func typeOf(path string) string {
	if strings.HasSuffix(path, ".md") {
		return "text/markdown"
	}
	t := mime.TypeByExtension(filepath.Ext(path))
	if t == "" {
		return "application/octet-stream"
	}
	return t
}

// runFileGet: file get SHA256 [--out FILE].
func runFileGet(ctx context.Context, m *Main, args []string) error {
	const cmd = "file get"
	f := &fileFlags{}
	fs := m.fileFlagSet("get", "file get [--server URL] [--out FILE] SHA256", f)
	out := fs.String("out", "", "write the blob to FILE (written whole and verified, then renamed into place); default stdout")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 1, "a sha256"); err != nil {
		return err
	}
	sha := strings.ToLower(pos[0])
	if !blossom.ValidHash(sha) {
		return usagef("%s: %q is not a 64-hex sha256", cmd, pos[0])
	}
	c, err := f.client(m, cmd, false)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	if *out == "" {
		err = c.Get(ctx, sha, m.Stdout, maxGetBytes)
	} else {
		err = getToFile(ctx, c, sha, *out)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return nil
}

// getToFile downloads sha to a temporary file beside path and renames
// it there once verified.
func getToFile(ctx context.Context, c *blossom.Client, sha, path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".get-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = c.Get(ctx, sha, tmp, maxGetBytes)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// runFileLs: file ls [PUBKEY].
func runFileLs(ctx context.Context, m *Main, args []string) error {
	const cmd = "file ls"
	f, pos, err := m.parseFileFlags("ls", "file ls [--server URL] [--key NSEC | PUBKEY] [--json]", args)
	if err != nil {
		return err
	}
	c, err := f.client(m, cmd, len(pos) == 0)
	if err != nil {
		return err
	}
	pk, err := lsWho(c, pos)
	if err != nil {
		return usagef("%s: %v", cmd, err)
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	list, err := c.List(ctx, pk, 100000)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if f.json {
		return writeJSON(m.Stdout, list)
	}
	for _, d := range list {
		fmt.Fprintf(m.Stdout, "%s  %10d  %s  %s\n", d.SHA256, d.Size, d.Type, d.URL)
	}
	return nil
}

// lsWho is the pubkey to list: the argument, else the key's.
func lsWho(c *blossom.Client, pos []string) (string, error) {
	switch len(pos) {
	case 0:
		return nostr.GetPublicKey(c.SecretKey)
	case 1:
		return events.ParsePubKey(pos[0])
	}
	return "", fmt.Errorf("want at most one pubkey")
}

// runFileRm: file rm SHA256...
func runFileRm(ctx context.Context, m *Main, args []string) error {
	const cmd = "file rm"
	f, pos, err := m.parseFileFlags("rm", "file rm [--server URL] [--key NSEC] SHA256...", args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("%s: want one or more sha256", cmd)
	}
	c, err := f.client(m, cmd, true)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	for _, sha := range pos {
		if err := c.Delete(ctx, strings.ToLower(sha)); err != nil {
			return fmt.Errorf("%s: %s: %w", cmd, sha, err)
		}
		fmt.Fprintf(m.Stdout, "deleted %s\n", sha)
	}
	return nil
}
