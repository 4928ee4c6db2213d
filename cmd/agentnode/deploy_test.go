package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// unitFile is a systemd unit: each section's keys with every value given
// (a key may repeat).
type unitFile map[string]map[string][]string

// readUnit parses a systemd unit file (comments, sections, Key=Value).
func readUnit(t *testing.T, path string) unitFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u, section := unitFile{}, ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s: not a unit line: %q", path, line)
			}
			u[section][strings.TrimSpace(k)] = append(u[section][strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	return u
}

// TestSystemdUnit_MatchesServeFlags checks deploy/systemd/agentnode.service
// against serve's real flags and for its hardening: the node runs as an
// unprivileged user that may write only to its data directory.
func TestSystemdUnit_MatchesServeFlags(t *testing.T) {
	path := filepath.Join("..", "..", "deploy", "systemd", "agentnode.service")
	svc := readUnit(t, path)["Service"]
	if svc == nil {
		t.Fatal("no [Service] section")
	}
	args := strings.Fields(lastSet(svc["ExecStart"]))
	if len(args) < 2 || !filepath.IsAbs(args[0]) || args[1] != "serve" {
		t.Fatalf("ExecStart = %q, want /abs/agentnode serve ...", args)
	}
	c := &ServeCommand{m: &Main{Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}}
	if err := c.ParseFlags(args[2:]); err != nil {
		t.Fatalf("serve rejects the unit's command line: %v", err)
	}
	data := c.Config.DataDir
	env := map[string]string{}
	for _, e := range svc["Environment"] {
		k, v, _ := strings.Cut(e, "=")
		env[k] = v
	}
	checkComposeEnv(t, c.FlagSet(), env)
	if want := "/var/lib/" + lastSet(svc["StateDirectory"]); data != want {
		t.Errorf("--data %s is not the StateDirectory %s", data, want)
	}
	if !slices.Contains(strings.Fields(strings.Join(svc["ReadWritePaths"], " ")), data) {
		t.Errorf("the data directory %s is not in ReadWritePaths %q", data, svc["ReadWritePaths"])
	}
	checkHardening(t, svc)
	verifyUnit(t, path)
}

// checkHardening requires the options that keep a compromised node in its box.
func checkHardening(t *testing.T, svc map[string][]string) {
	t.Helper()
	if lastSet(svc["DynamicUser"]) != "yes" && (lastSet(svc["User"]) == "" || lastSet(svc["User"]) == "root") {
		t.Error("the unit runs as root (no DynamicUser=yes, no User=)")
	}
	for key, want := range map[string]string{
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
		"PrivateDevices": "yes", "CapabilityBoundingSet": "", "RestrictSUIDSGID": "yes",
		"ProtectKernelTunables": "yes", "ProtectKernelModules": "yes", "ProtectControlGroups": "yes",
		"KillSignal": "SIGTERM", "UMask": "0077",
	} {
		if got, ok := svc[key]; !ok || lastSet(got) != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	families := strings.Fields(lastSet(svc["RestrictAddressFamilies"]))
	for _, f := range []string{"AF_INET", "AF_INET6"} {
		if !slices.Contains(families, f) {
			t.Errorf("RestrictAddressFamilies %q lacks %s (the node listens and dials on it)", families, f)
		}
	}
}

// verifyUnit runs systemd-analyze verify on the unit (its binary path
// replaced by an executable that exists here), when systemd-analyze is
// installed.
func verifyUnit(t *testing.T, path string) {
	t.Helper()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not installed: the unit's syntax is not verified by systemd")
		return
	}
	b, _ := os.ReadFile(path)
	exe, _ := os.Executable()
	copied := filepath.Join(t.TempDir(), "agentnode.service")
	os.WriteFile(copied, bytes.ReplaceAll(b, []byte("/usr/local/bin/agentnode"), []byte(exe)), 0o644)
	if out, err := exec.Command(analyze, "verify", copied).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// lastSet is the value a unit file setting takes: the last assignment.
func lastSet(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1] // systemd: the last assignment wins
}

// TestDockerfile_RunsAsNonRootOnAReadOnlyRoot: the runtime image runs as
// an unprivileged user owning /data, and compose runs it with a read-only
// root filesystem, no capabilities and no privilege gain.
func TestDockerfile_RunsAsNonRootOnAReadOnlyRoot(t *testing.T) {
	df, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	runtime := string(df[bytes.LastIndex(df, []byte("\nFROM ")):])
	user := ""
	for _, line := range strings.Split(runtime, "\n") {
		if rest, ok := strings.CutPrefix(line, "USER "); ok {
			user = strings.TrimSpace(rest)
		}
	}
	if name, _, _ := strings.Cut(user, ":"); name == "" || name == "0" || name == "root" {
		t.Errorf("the runtime stage runs as %q: want a non-root USER", user)
	}
	if chown, vol := strings.Index(runtime, "chown"), strings.Index(runtime, "VOLUME /data"); chown < 0 || vol < chown {
		t.Error("/data is not chowned to the user before VOLUME /data (a new volume would be root's)")
	}
	checkComposeHardening(t)
}

func checkComposeHardening(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cf struct {
		Services map[string]struct {
			ReadOnly    bool     `yaml:"read_only"`
			Tmpfs       []string `yaml:"tmpfs"`
			CapDrop     []string `yaml:"cap_drop"`
			SecurityOpt []string `yaml:"security_opt"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &cf); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"agentnode", "agentnode-1", "agentnode-2"} {
		s := cf.Services[name]
		if !s.ReadOnly || !slices.Contains(s.Tmpfs, "/tmp") || !slices.Contains(s.CapDrop, "ALL") ||
			!slices.Contains(s.SecurityOpt, "no-new-privileges:true") {
			t.Errorf("compose service %s: read_only %v, tmpfs %q, cap_drop %q, security_opt %q: want a read-only root, /tmp on tmpfs, no capabilities, no-new-privileges",
				name, s.ReadOnly, s.Tmpfs, s.CapDrop, s.SecurityOpt)
		}
	}
}
