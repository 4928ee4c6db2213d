package main

import (
	"bytes"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// composeFile is the part of docker-compose.yml the test checks.
type composeFile struct {
	Services map[string]struct {
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Volumes     []string          `yaml:"volumes"`
		StopSignal  string            `yaml:"stop_signal"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// TestDockerCompose_MatchesServeFlags checks docker-compose.yml against the
// binary's real serve flags: no Docker engine runs here, so this is what
// keeps the file honest.
func TestDockerCompose_MatchesServeFlags(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	if err := yaml.Unmarshal(raw, &cf); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	svc, ok := cf.Services["agentnode"]
	if !ok {
		t.Fatal("no agentnode service")
	}
	if len(svc.Command) == 0 || svc.Command[0] != "serve" {
		t.Fatalf("command = %q, want serve ...", svc.Command)
	}
	c := &ServeCommand{m: &Main{Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}}
	if err := c.ParseFlags(svc.Command[1:]); err != nil {
		t.Fatalf("serve rejects the compose command line: %v", err)
	}
	cfg := c.Config // FlagSet below re-binds the defaults into c.Config
	checkComposeEnv(t, c.FlagSet(), svc.Environment)
	checkComposePort(t, cfg.Listen, svc.Ports)
	checkComposeVolume(t, cfg.DataDir, svc.Volumes, cf.Volumes)
	if svc.StopSignal != "SIGTERM" && svc.StopSignal != "SIGINT" {
		t.Errorf("stop_signal = %q: serve shuts down cleanly on SIGTERM or SIGINT only", svc.StopSignal)
	}
}

func checkComposeEnv(t *testing.T, fs *flag.FlagSet, env map[string]string) {
	t.Helper()
	var usage strings.Builder
	fs.VisitAll(func(f *flag.Flag) { usage.WriteString(f.Usage + "\n") })
	for name := range env {
		if !strings.Contains(usage.String(), "(env "+name+")") {
			t.Errorf("environment %s is not read by serve", name)
		}
	}
}

func checkComposePort(t *testing.T, listen string, ports []string) {
	t.Helper()
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		t.Fatalf("listen %q: %v", listen, err)
	}
	if host != "0.0.0.0" && host != "" {
		t.Errorf("listen host %q is unreachable from outside the container", host)
	}
	for _, p := range ports {
		if strings.HasSuffix(p, ":"+port) {
			return
		}
	}
	t.Errorf("no published port maps to the container port %s (ports %q)", port, ports)
}

func checkComposeVolume(t *testing.T, dataDir string, mounts []string, named map[string]any) {
	t.Helper()
	for _, m := range mounts {
		src, dst, _ := strings.Cut(m, ":")
		if dst == dataDir {
			if _, ok := named[src]; !ok {
				t.Errorf("data dir %s is mounted from %q, which is not a named volume", dataDir, src)
			}
			return
		}
	}
	t.Errorf("data dir %s is not on a volume (volumes %q)", dataDir, mounts)
}
