package agentd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentnode/agentnode/capabilities/acp"
)

// InstalledCap is one capability package installed on an agent, as
// <data>/agents/<agent>/caps.json records it. The package itself is cached
// beside it, byte for byte as signed: caps/<name>@<version>.acp.yaml.
type InstalledCap struct {
	ID      string `json:"id"`      // did:nuwa:cap:<name>@<semver>
	Name    string `json:"name"`    // <name>
	Version string `json:"version"` // <semver>
	Title   string `json:"title"`   // metadata.name
	Author  string `json:"author"`  // 64-hex key that signed the package (an Ed25519 signer: its did:key)
	// EventID is the kind-30199 event it was installed from; empty for a
	// signed local file.
	EventID     string   `json:"event_id,omitempty"`
	Naddr       string   `json:"naddr,omitempty"`
	SHA256      string   `json:"sha256"` // of the cached file
	SchemaURI   string   `json:"schema_uri"`
	MemoryScope string   `json:"memory_scope,omitempty"`
	Permissions []string `json:"permissions"` // granted: metadata.permissions.require
	Tools       []string `json:"tools"`
	// NotCallable lists the tools that are listed but cannot run here, each
	// "name: reason" (no binding, a binding type the node does not run).
	NotCallable []string `json:"not_callable,omitempty"`
	// Warnings are the package's parse warnings, kept through install
	// (docs/INTEROP.md).
	Warnings    []string  `json:"warnings,omitempty"`
	File        string    `json:"file"` // the cached package, relative to the agent's directory
	InstalledAt time.Time `json:"installed_at"`
	UpgradedAt  time.Time `json:"upgraded_at,omitzero"`
}

// capsFile is the on-disk shape of caps.json.
type capsFile struct {
	Version int            `json:"version"`
	Caps    []InstalledCap `json:"caps"`
}

const capsVersion = 1

// capsState holds what the daemon keeps about capabilities: it serialises
// changes to the caps files and caches parsed packages, per-agent routers
// and chat histories. Its maps are guarded by mu.
type capsState struct {
	files AgentFiles // <data>/agents/<agent>/... unless Config.Files

	write sync.Mutex // serialises caps.json changes (never held across model calls)

	mu       sync.Mutex
	packages map[string]*acp.Package   // by sha256 of the raw file
	lists    map[string][]InstalledCap // caps.json as last read or written, by agent
	chat     *chatState                // routers and histories (chat.go)
}

func newCapsState(cfg Config) *capsState {
	files := cfg.Files
	if files == nil {
		files = DirFiles{Dir: filepath.Join(cfg.DataDir, "agents")}
	}
	return &capsState{files: files, packages: map[string]*acp.Package{},
		lists: map[string][]InstalledCap{}, chat: newChatState()}
}

// filesTimeout bounds one agent-file operation under the caller's ctx.
const filesTimeout = 30 * time.Second

func filesCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, filesTimeout)
}

// invalidate forgets the cached lists and routers (another instance may
// have changed the agents' capabilities).
func (s *capsState) invalidate() {
	s.mu.Lock()
	agents := make([]string, 0, len(s.lists))
	for a := range s.lists {
		agents = append(agents, a)
	}
	clear(s.lists)
	s.mu.Unlock()
	for _, a := range agents {
		s.chat.dropRouter(a)
	}
}

// forget drops a removed agent's capabilities: its directory (caps.json and
// the cached packages), its cached list and its router. Its state stays in
// the state store.
func (s *capsState) forget(ctx context.Context, agent string) error {
	s.write.Lock()
	defer s.write.Unlock()
	s.mu.Lock()
	delete(s.lists, agent)
	s.mu.Unlock()
	s.chat.dropRouter(agent)
	ctx, cancel := filesCtx(ctx)
	defer cancel()
	return s.files.RemoveAll(ctx, agent)
}

// load returns an agent's installed capabilities (a copy the caller may
// change): caps.json as last written by this daemon, else read from disk;
// a missing file is no capability.
func (s *capsState) load(ctx context.Context, agent string) ([]InstalledCap, error) {
	s.mu.Lock()
	list, ok := s.lists[agent]
	s.mu.Unlock()
	if ok {
		return cloneCaps(list), nil
	}
	list, err := s.read(ctx, agent)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.lists[agent] = list
	s.mu.Unlock()
	return cloneCaps(list), nil
}

// read reads an agent's caps.json.
func (s *capsState) read(ctx context.Context, agent string) ([]InstalledCap, error) {
	path := agent + "/caps.json"
	ctx, cancel := filesCtx(ctx)
	defer cancel()
	b, err := s.files.Read(ctx, agent, "caps.json")
	if errors.Is(err, fs.ErrNotExist) {
		return []InstalledCap{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agentd: read %s: %w", path, err)
	}
	var f capsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("agentd: %s: %w", path, err)
	}
	if f.Version != capsVersion {
		return nil, fmt.Errorf("agentd: %s: version %d, want %d", path, f.Version, capsVersion)
	}
	if f.Caps == nil {
		f.Caps = []InstalledCap{}
	}
	return f.Caps, nil
}

// save writes an agent's caps.json atomically (0600).
func (s *capsState) save(ctx context.Context, agent string, caps []InstalledCap) error {
	b, err := json.MarshalIndent(capsFile{Version: capsVersion, Caps: caps}, "", "  ")
	if err != nil {
		return fmt.Errorf("agentd: encode caps: %w", err)
	}
	ctx, cancel := filesCtx(ctx)
	defer cancel()
	if err := s.files.Write(ctx, agent, "caps.json", append(b, '\n')); err != nil {
		return fmt.Errorf("agentd: write caps: %w", err)
	}
	s.mu.Lock()
	s.lists[agent] = cloneCaps(caps)
	s.mu.Unlock()
	return nil
}

// cloneCaps copies a list so that no slice is shared.
func cloneCaps(list []InstalledCap) []InstalledCap {
	out := make([]InstalledCap, len(list))
	for i, c := range list {
		c.Permissions, c.Tools = slices.Clone(c.Permissions), slices.Clone(c.Tools)
		out[i] = c
	}
	return out
}

// cacheFile writes the package file under the agent's caps directory and
// returns its path relative to the agent's directory.
func (s *capsState) cacheFile(ctx context.Context, agent, name, version string, raw []byte) (string, error) {
	rel := "caps/" + name + "@" + version + ".acp.yaml"
	ctx, cancel := filesCtx(ctx)
	defer cancel()
	if err := s.files.Write(ctx, agent, rel, raw); err != nil {
		return "", fmt.Errorf("agentd: cache package: %w", err)
	}
	return rel, nil
}

// dropFile removes a cached package file (a missing one is fine).
func (s *capsState) dropFile(ctx context.Context, agent, rel string) error {
	ctx, cancel := filesCtx(ctx)
	defer cancel()
	if err := s.files.Remove(ctx, agent, filepath.ToSlash(rel)); err != nil {
		return fmt.Errorf("agentd: %w", err)
	}
	return nil
}

// readFile reads a cached package file.
func (s *capsState) readFile(ctx context.Context, agent, rel string) ([]byte, error) {
	if rel == "" || strings.Contains(rel, "..") {
		return nil, fmt.Errorf("agentd: bad cached package path %q", rel)
	}
	ctx, cancel := filesCtx(ctx)
	defer cancel()
	b, err := s.files.Read(ctx, agent, filepath.ToSlash(rel))
	if err != nil {
		return nil, fmt.Errorf("agentd: read cached package: %w", err)
	}
	return b, nil
}

// findCap returns the index of the installed capability ref names: its
// full id, name@version or name (case-insensitive on the name).
func findCap(caps []InstalledCap, ref string) int {
	ref = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(ref), "did:nuwa:cap:"))
	return slices.IndexFunc(caps, func(c InstalledCap) bool {
		return strings.EqualFold(c.Name, ref) || strings.EqualFold(c.Name+"@"+c.Version, ref)
	})
}
