package acp_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/capabilities/acp"
)

// Test keys (hex secret keys; fixed so failures reproduce).
const (
	skAlice = "0000000000000000000000000000000000000000000000000000000000000003"
	skBob   = "b7e151628aed2a6abf7158809cf4f3c762e7160f38b4da56a784d9045190cfef"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func note(t testing.TB) []byte    { return readTestdata(t, "note.acp.yaml") }
func weather(t testing.TB) []byte { return readTestdata(t, "weatherreporter.acp.yaml") }

// replace replaces exactly one occurrence of old in raw.
func replace(t testing.TB, raw []byte, old, new string) []byte {
	t.Helper()
	if n := strings.Count(string(raw), old); n != 1 {
		t.Fatalf("%q occurs %d times, want 1", old, n)
	}
	return []byte(strings.Replace(string(raw), old, new, 1))
}

func mustParse(t testing.TB, raw []byte) *acp.Package {
	t.Helper()
	p, err := acp.Parse(raw, acp.Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func mustSign(t testing.TB, raw []byte, sk string) []byte {
	t.Helper()
	out, err := acp.SignAs(raw, sk, acp.SigFormNostr)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return out
}

// parseErr parses raw and returns its *ParseError, failing if it parsed.
func parseErr(t testing.TB, raw []byte, opts acp.Options) *acp.ParseError {
	t.Helper()
	_, err := acp.Parse(raw, opts)
	var perr *acp.ParseError
	if !errors.As(err, &perr) {
		t.Fatalf("Parse = %v, want a *ParseError", err)
	}
	if !errors.Is(err, acp.ErrInvalid) {
		t.Errorf("errors.Is(err, ErrInvalid) = false")
	}
	return perr
}
