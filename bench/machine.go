package bench

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
)

// Machine describes where the figures were taken.
type Machine struct {
	GOOS       string            `json:"goos"`
	GOARCH     string            `json:"goarch"`
	NumCPU     int               `json:"num_cpu"`
	GoVersion  string            `json:"go_version"`
	Dir        string            `json:"dir"`          // ingest and memory phases
	DirFS      string            `json:"dir_fs"`       // its mount: device, type, mount point
	QueryDir   string            `json:"query_dir"`    // query phase
	QueryDirFS string            `json:"query_dir_fs"` // its mount
	Versions   map[string]string `json:"versions"`     // module path -> version
}

// versionedModules are the modules whose versions the report names.
var versionedModules = []string{
	"github.com/fiatjaf/khatru",
	"github.com/fiatjaf/eventstore",
	"github.com/nbd-wtf/go-nostr",
	"github.com/PowerDNS/lmdb-go",
	"github.com/blugelabs/bluge",
}

// describeMachine fills a Machine for the two directories.
func describeMachine(dir, queryDir string) Machine {
	return Machine{
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, NumCPU: runtime.NumCPU(),
		GoVersion: runtime.Version(),
		Dir:       dir, DirFS: filesystemOf(dir),
		QueryDir: queryDir, QueryDirFS: filesystemOf(queryDir),
		Versions: moduleVersions(),
	}
}

// moduleVersions reads the versions of versionedModules from the build info.
func moduleVersions() map[string]string {
	out := map[string]string{}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, m := range info.Deps {
		for _, want := range versionedModules {
			if m.Path == want {
				out[m.Path] = m.Version
			}
		}
	}
	return out
}

// filesystemOf names the mount holding dir, from /proc/mounts: the entry
// with the longest mount point that is a prefix of dir's real path.
func filesystemOf(dir string) string {
	path, err := filepath.Abs(dir)
	if err == nil {
		path, err = filepath.EvalSymlinks(path)
	}
	if err != nil {
		return "unknown"
	}
	f, err := os.Open("/proc/mounts")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	best, bestLen := "unknown", -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || !under(path, fields[1]) || len(fields[1]) <= bestLen {
			continue
		}
		best, bestLen = fields[2]+" ("+fields[0]+" on "+fields[1]+")", len(fields[1])
	}
	return best
}

// under reports whether path is mount or inside it.
func under(path, mount string) bool {
	return mount == "/" || path == mount || strings.HasPrefix(path, strings.TrimSuffix(mount, "/")+"/")
}
