package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDockerfile_OperatorBasics checks what no engine here can run: the
// runtime image trusts TLS certificates, checks /healthz, stamps the
// version, and the build context leaves agent keys and build output out.
func TestDockerfile_OperatorBasics(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	df := read("Dockerfile")
	runtime := df[strings.LastIndex(df, "\nFROM "):]
	for _, want := range []string{"ca-certificates", "HEALTHCHECK", "http://127.0.0.1:7447/healthz"} {
		if !strings.Contains(runtime, want) {
			t.Errorf("the runtime stage of the Dockerfile lacks %q", want)
		}
	}
	if !strings.Contains(df, "-X main.Version=${VERSION}") || !strings.Contains(df, "ARG VERSION") {
		t.Error("the Dockerfile does not stamp the version (ARG VERSION, -ldflags -X main.Version)")
	}
	ignore := strings.Fields(read(".dockerignore"))
	for _, want := range []string{"agentnode-data/", "bin/", "node_modules/"} {
		if !strings.Contains(strings.Join(ignore, "\n")+"\n", want+"\n") {
			t.Errorf(".dockerignore lacks %s", want)
		}
	}
}
