package agentd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/internal/atomicfile"
	"github.com/agentnode/agentnode/blossom"
	"github.com/agentnode/agentnode/events"
)

// DefFiles is where an install fetches the files of a definition (its
// ["e", <1063>, <relay>, "file"] references): the 1063's url, then the
// author's Blossom servers (kind 10063), then the node's own blobs. Each
// file is verified (sha256 and size) before the agent exists; any file
// that cannot be fetched or verified fails the install (ErrFileUnavailable)
// and nothing is created.
type DefFiles struct {
	// HTTP fetches remote files; it must refuse the node's own network
	// (bindings.GuardedClient). Nil: no remote fetches.
	HTTP *http.Client
	// Local opens a blob of the node's own Blossom store (nil: none).
	Local func(sha string) (io.ReadCloser, error)
	// MaxBytes bounds one file (0: DefaultFileBytes); MaxFiles the files
	// of one definition (0: DefaultMaxFiles); Timeout one fetch (0:
	// DefaultFileTimeout).
	MaxBytes int64
	MaxFiles int
	Timeout  time.Duration
}

// Bounds of definition files.
const (
	DefaultFileBytes   = 256 << 20
	DefaultMaxFiles    = 64
	DefaultFileTimeout = 2 * time.Minute
	maxServers         = 8 // of an author's 10063 list
)

// InstalledFile is a definition file placed in an agent's home.
type InstalledFile struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	Type   string `json:"type,omitempty"`
	Path   string `json:"path"`             // absolute, under FilesDir
	Meta   string `json:"metadata"`         // the kind-1063 event id
	Source string `json:"source,omitempty"` // where it was fetched from
}

// FilesDir is an agent's home for its definition's files:
// <data>/agents/<agent pubkey>/files.
func (d *Daemon) FilesDir(agent string) string {
	return filepath.Join(d.cfg.DataDir, "agents", agent, "files")
}

// manifestPath lists the agent's files (files.json beside files/).
func (d *Daemon) manifestPath(agent string) string {
	return filepath.Join(d.cfg.DataDir, "agents", agent, "files.json")
}

// stagedFiles are a definition's files fetched and verified into a
// staging directory, not yet an agent's.
type stagedFiles struct {
	dir   string
	files []InstalledFile
}

// stageFiles fetches every file of def into a fresh staging directory.
// No files: nil, nil.
func (d *Daemon) stageFiles(ctx context.Context, def *events.Definition) (*stagedFiles, error) {
	return d.stageRefs(ctx, def.PubKey, def.Files)
}

// stageRefs fetches the files refs name (kind-1063 references by
// author) into a fresh staging directory. No refs: nil, nil.
func (d *Daemon) stageRefs(ctx context.Context, author string, refs []events.EventRef) (*stagedFiles, error) {
	return d.stageRefsFrom(ctx, author, refs, nil)
}

// stageRefsFrom is stageRefs that first copies a file from prior (the
// agent's installed files: an upgrade) when one has the same sha256,
// verified like any source. No refs: nil, nil.
func (d *Daemon) stageRefsFrom(ctx context.Context, author string, refs []events.EventRef, prior []InstalledFile) (*stagedFiles, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	cfg := d.cfg.DefFiles
	if max := orInt(cfg.MaxFiles, DefaultMaxFiles); len(refs) > max {
		return nil, fmt.Errorf("%w: %d files, this node takes at most %d", ErrFileUnavailable, len(refs), max)
	}
	dir := filepath.Join(d.cfg.DataDir, "agents", ".staging", randomName())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("agentd: staging: %w", err)
	}
	st := &stagedFiles{dir: dir}
	for _, ref := range refs {
		f, err := d.stageFile(ctx, author, ref, dir, st.files, prior)
		if err != nil {
			st.discard()
			return nil, err
		}
		st.files = append(st.files, f)
	}
	return st, nil
}

// stageFile reads ref's 1063 and fetches its file into dir.
func (d *Daemon) stageFile(ctx context.Context, author string, ref events.EventRef, dir string, have, prior []InstalledFile) (InstalledFile, error) {
	evt, err := d.byID(ctx, ref.ID)
	if err != nil {
		return InstalledFile{}, err
	}
	if evt == nil {
		return InstalledFile{}, fmt.Errorf("%w: its file metadata %s (kind 1063) is not on this node's relay (fetch it with the definition)", ErrFileUnavailable, ref.ID)
	}
	meta, err := events.ParseFileMetadata(evt)
	if err != nil {
		return InstalledFile{}, fmt.Errorf("%w: %s: %v", ErrFileUnavailable, ref.ID, err)
	}
	name := meta.FileName()
	for _, h := range have {
		if h.Name == name {
			return InstalledFile{}, fmt.Errorf("%w: two files are named %q", ErrFileUnavailable, name)
		}
	}
	path := filepath.Join(dir, name)
	src, err := d.fetchFile(ctx, author, meta, path, prior)
	if err != nil {
		return InstalledFile{}, fmt.Errorf("%w: %s (sha256 %s): %v", ErrFileUnavailable, name, meta.SHA256, err)
	}
	return InstalledFile{Name: name, SHA256: meta.SHA256, Size: meta.Size, Type: meta.Type, Meta: ref.ID, Source: src}, nil
}

// fetchFile tries each source in turn; it returns the one that gave a
// verified file, or every source's failure.
func (d *Daemon) fetchFile(ctx context.Context, author string, meta *events.FileMetadata, path string, prior []InstalledFile) (string, error) {
	var errs []error
	srcs := d.fileSources(ctx, author, meta)
	for _, f := range prior {
		if f.SHA256 == meta.SHA256 && f.Path != "" {
			srcs = append([]string{installedSource + f.Path}, srcs...)
			break
		}
	}
	for _, src := range srcs {
		err := d.fetchOne(ctx, src, meta, path)
		if err == nil {
			return src, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", src, err))
	}
	if len(errs) == 0 {
		return "", errors.New("no source: the metadata has no url, the author lists no Blossom server and this node does not hold it")
	}
	return "", errors.Join(errs...)
}

// installedSource prefixes the path of a file the agent already has (an
// upgrade keeping it): copied and verified, no fetch.
const installedSource = "installed:"

// fileSources are the 1063's url, the author's Blossom servers and
// "local" (the node's own store), each once.
func (d *Daemon) fileSources(ctx context.Context, author string, meta *events.FileMetadata) []string {
	var srcs []string
	if d.cfg.DefFiles.HTTP != nil {
		if meta.URL != "" {
			srcs = append(srcs, meta.URL)
		}
		for _, s := range d.authorServers(ctx, author) {
			if u := strings.TrimRight(s, "/") + "/" + meta.SHA256; u != meta.URL {
				srcs = append(srcs, u)
			}
		}
	}
	if d.cfg.DefFiles.Local != nil {
		srcs = append(srcs, "local")
	}
	return srcs
}

// authorServers are the http(s) servers of the author's newest kind 10063.
func (d *Daemon) authorServers(ctx context.Context, author string) []string {
	evt, err := d.newest(ctx, nostr.Filter{Kinds: []int{events.KindBlossomServers}, Authors: []string{author}, Limit: 1})
	if err != nil || evt == nil {
		return nil
	}
	var out []string
	for _, t := range evt.Tags {
		if len(t) >= 2 && t[0] == "server" && (strings.HasPrefix(t[1], "https://") || strings.HasPrefix(t[1], "http://")) && len(out) < maxServers {
			out = append(out, t[1])
		}
	}
	return out
}

// fetchOne fetches the file from src into path, verified; a failed
// fetch leaves no file.
func (d *Daemon) fetchOne(ctx context.Context, src string, meta *events.FileMetadata, path string) (err error) {
	cfg := d.cfg.DefFiles
	ctx, cancel := context.WithTimeout(ctx, orDuration(cfg.Timeout, DefaultFileTimeout))
	defer cancel()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	max := orInt64(cfg.MaxBytes, DefaultFileBytes)
	if path, ok := strings.CutPrefix(src, installedSource); ok {
		err = copyLocal(func(string) (io.ReadCloser, error) { return os.Open(path) }, meta, max, f)
	} else if src == "local" {
		err = copyLocal(cfg.Local, meta, max, f)
	} else {
		err = blossom.Fetch(ctx, cfg.HTTP, src, meta.SHA256, meta.Size, max, f)
	}
	if err == nil {
		err = f.Sync()
	}
	return err
}

// copyLocal copies the node's own blob, verified like a remote one.
func copyLocal(open func(string) (io.ReadCloser, error), meta *events.FileMetadata, max int64, w io.Writer) error {
	rc, err := open(meta.SHA256)
	if err != nil {
		return err
	}
	defer rc.Close()
	return blossom.Verify(rc, meta.SHA256, meta.Size, max, w)
}

// adopt moves the staged files into agent's home and writes its
// manifest. The caller holds d.mu.
func (d *Daemon) adopt(agent string, st *stagedFiles) error {
	if st == nil {
		return nil
	}
	home := d.FilesDir(agent)
	if err := os.MkdirAll(filepath.Dir(home), 0o700); err != nil {
		return fmt.Errorf("agentd: files: %w", err)
	}
	os.RemoveAll(home) // an earlier install's leftovers (a reinstall of the same key never happens)
	if err := os.Rename(st.dir, home); err != nil {
		return fmt.Errorf("agentd: files: %w", err)
	}
	for i := range st.files {
		st.files[i].Path = filepath.Join(home, st.files[i].Name)
	}
	b, _ := json.MarshalIndent(st.files, "", "  ")
	if err := atomicfile.Write(d.manifestPath(agent), b, 0o600); err != nil {
		return fmt.Errorf("agentd: files manifest: %w", err)
	}
	return atomicfile.SyncDir(filepath.Dir(home))
}

// discard removes the staging directory.
func (st *stagedFiles) discard() {
	if st != nil {
		os.RemoveAll(st.dir)
	}
}

// Files are the definition files installed in the agent's home.
func (d *Daemon) Files(agent string) ([]InstalledFile, error) {
	b, err := os.ReadFile(d.manifestPath(agent))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agentd: files manifest: %w", err)
	}
	var files []InstalledFile
	if err := json.Unmarshal(b, &files); err != nil {
		return nil, fmt.Errorf("agentd: files manifest: %w", err)
	}
	return files, nil
}

func randomName() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func orInt64(v, def int64) int64 {
	if v <= 0 {
		return def
	}
	return v
}

func orDuration(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// undoCreate drops an agent create made (its record and key) when its
// files could not be placed. The caller holds d.mu.
func (d *Daemon) undoCreate(ctx context.Context, a Agent) error {
	return errors.Join(d.reg.remove(ctx, a.PubKey), d.keys.Delete(ctx, a.PubKey))
}

// forgetFiles removes the agent's files, skills, MCP servers (stopped
// first) and their manifests.
func (d *Daemon) forgetFiles(agent string) error {
	servers, _ := d.MCPServers(agent)
	for _, s := range servers {
		d.mcp.stop(mcpURI(agent, s.EventID))
	}
	var errs []error
	for _, p := range []string{d.manifestPath(agent), d.skillsPath(agent), d.mcpPath(agent)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	skillsDir := filepath.Join(d.cfg.DataDir, "agents", agent, "skills")
	mcpDir := filepath.Join(d.cfg.DataDir, "agents", agent, "mcp")
	return errors.Join(append(errs, os.RemoveAll(d.FilesDir(agent)), os.RemoveAll(skillsDir), os.RemoveAll(mcpDir))...)
}
