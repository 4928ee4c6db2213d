package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The docs and the binary agree (issue 26): every subcommand, flag,
// environment variable, --config key and HTTP endpoint the binary has is
// documented (README.md or docs/*.md), and every flag and environment
// variable the docs name exists in the binary. The binary's side is read
// from the binary itself: the command table, each command's real flag set
// (allCommandFlags), the config file's types (serveFile, by reflection),
// the AGENTNODE_* names and mux patterns in the module's non-test Go
// source.
func TestDocs_agreeWithTheBinary(t *testing.T) {
	root := filepath.Join("..", "..")
	docs := readDocs(t, root)
	all := strings.Join(slices.Collect(mapValues(docs)), "\n")
	cmds := allCommandFlags(context.Background())

	t.Run("subcommands are documented in CLI.md", func(t *testing.T) {
		for _, c := range cmds {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(c.Path) + `\b`).MatchString(docs["docs/CLI.md"]) {
				t.Errorf("`agentnode %s` is not in docs/CLI.md", c.Path)
			}
		}
	})
	t.Run("flags are documented", func(t *testing.T) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				if !strings.Contains(all, "--"+f) && !strings.Contains(all, "`-"+f) {
					t.Errorf("`agentnode %s --%s` is in no doc", c.Path, f)
				}
			}
		}
	})
	t.Run("documented flags exist", func(t *testing.T) {
		known := map[string]bool{}
		for _, c := range cmds {
			for _, f := range c.Flags {
				known[f] = true
			}
		}
		for name, text := range docs {
			for _, f := range documentedFlags(text) {
				if !known[f] {
					t.Errorf("%s names `--%s` on an agentnode command line; no command has it", name, f)
				}
			}
		}
	})
	t.Run("environment variables", func(t *testing.T) {
		code := sourceEnvVars(t, root, false)
		for v := range code {
			if !strings.Contains(all, v) {
				t.Errorf("the binary reads %s; no doc names it", v)
			}
		}
		// Docs may also name the knobs of the tests and benchmarks, the
		// family AGENTNODE_LLM_*, and shell variables they set themselves.
		known := sourceEnvVars(t, root, true)
		for name, text := range docs {
			for _, m := range regexp.MustCompile(`AGENTNODE_[A-Z0-9_]*[A-Z0-9](_\*)?`).FindAllStringSubmatch(text, -1) {
				v := strings.TrimSuffix(m[0], "_*")
				if !known[v] && m[1] == "" && !strings.Contains(text, v+"=$") {
					t.Errorf("%s names %s; the binary does not read it", name, v)
				}
			}
		}
	})
	t.Run("config keys are in SERVE.md", func(t *testing.T) {
		for _, key := range configKeys(reflect.TypeOf(serveFile{}), "", 2) {
			last := key[strings.LastIndex(key, ".")+1:]
			if !strings.Contains(docs["docs/SERVE.md"], `"`+last+`"`) {
				t.Errorf("--config key %s is not in docs/SERVE.md", key)
			}
		}
		for _, section := range (&serveFile{}).sections() {
			if !strings.Contains(docs["docs/SERVE.md"], `"`+section.name+`"`) {
				t.Errorf("--config section %q is not in docs/SERVE.md", section.name)
			}
		}
	})
	t.Run("endpoints are documented", func(t *testing.T) {
		for _, p := range sourceEndpoints(t, root) {
			if !strings.Contains(all, p) {
				t.Errorf("the binary serves %s; no doc names it", p)
			}
		}
	})
}

// readDocs reads README.md and docs/*.md, by path relative to root.
func readDocs(t *testing.T, root string) map[string]string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	paths = append(paths, filepath.Join(root, "README.md"))
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
	}
	return out
}

func mapValues(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// documentedFlags are the --flags on the docs' agentnode command lines:
// lines (or table rows) that run `agentnode <command>`, up to a pipe or
// another program.
func documentedFlags(text string) []string {
	cmdline := regexp.MustCompile(`(?:^|[\s` + "`" + `(/])agentnode ([a-z][^|;&#]*)`)
	flagRE := regexp.MustCompile(`(?:^|\s|\[)--([a-z][a-z0-9-]*)`)
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, m := range cmdline.FindAllStringSubmatch(line, -1) {
			args := m[1]
			if i := strings.Index(args, "`"); i >= 0 {
				args = args[:i]
			}
			for _, f := range flagRE.FindAllStringSubmatch(args, -1) {
				out = append(out, f[1])
			}
		}
	}
	return out
}

// sourceEnvVars are the AGENTNODE_* names in the module's Go source
// outside vendored code: the binary's (non-test files), with tests also
// the tests' and benchmarks' knobs.
func sourceEnvVars(t *testing.T, root string, tests bool) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	re := regexp.MustCompile(`"(AGENTNODE_[A-Z0-9_]+)"`)
	walkGoFiles(t, root, tests, func(path, src string) {
		for _, m := range re.FindAllStringSubmatch(src, -1) {
			out[m[1]] = true
		}
	})
	return out
}

// sourceEndpoints are the paths of the mux patterns in the module's
// non-test Go source ("GET /agents/{id}" -> "/agents/{id}" as docs write
// it, the method dropped), the site's and the relay's.
func sourceEndpoints(t *testing.T, root string) []string {
	t.Helper()
	re := regexp.MustCompile(`^[^/]*\.Handle(?:Func)?\("(?:[A-Z]+ )?(/[^"]*)"`)
	rest := regexp.MustCompile(`\{[a-z]+\.\.\.\}$`) // a trailing wildcard: docs write "…/" or "…"
	seen := map[string]bool{}
	walkGo(t, root, func(path, src string) {
		for _, line := range strings.Split(src, "\n") {
			m := re.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				continue
			}
			p := strings.TrimSuffix(rest.ReplaceAllString(strings.TrimSuffix(m[1], "{$}"), ""), "/")
			if p != "" && p != "/static" {
				seen[p] = true
			}
		}
	})
	out := slices.Sorted(func(yield func(string) bool) {
		for p := range seen {
			if !yield(p) {
				return
			}
		}
	})
	return out
}

// walkGo calls fn with every non-test .go file of the module, outside
// vendored code, tests' helpers and benchmarks.
func walkGo(t *testing.T, root string, fn func(path, src string)) {
	t.Helper()
	walkGoFiles(t, root, false, fn)
}

// walkGoFiles is walkGo, with tests and the test-only packages too when
// tests is set.
func walkGoFiles(t *testing.T, root string, tests bool, fn func(path, src string)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git":
				return filepath.SkipDir
			case "bench", "hostile", "interop", "testkit", "pgtest":
				if !tests {
					return filepath.SkipDir
				}
			}
			if strings.HasSuffix(filepath.ToSlash(path), "relay/internal/khatru") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || (!tests && strings.HasSuffix(path, "_test.go")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fn(path, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// configKeys lists the JSON keys of a config struct type, dotted, down to
// depth levels.
func configKeys(typ reflect.Type, prefix string, depth int) []string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct || depth == 0 {
		return nil
	}
	var out []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" { // an embedded struct's keys are the section's
			out = append(out, configKeys(f.Type, prefix, depth)...)
			continue
		}
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		out = append(out, prefix+name)
		out = append(out, configKeys(f.Type, prefix+name+".", depth-1)...)
	}
	return out
}

// `agentnode help <command>` prints that command's usage and flags (it
// used to print the top-level help); a group's help lists its
// subcommands; an unknown command is a usage error.
func TestHelp_command(t *testing.T) {
	r := cli(t, nil, "help", "serve")
	if !strings.Contains(r.stderr, "Usage: agentnode serve") || !strings.Contains(r.stderr, "-postgres") || strings.Contains(r.stdout, "Commands:") {
		t.Errorf("help serve: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if r := cli(t, nil, "help", "state", "query"); !strings.Contains(r.stderr, "Usage: agentnode state query") {
		t.Errorf("help state query: %q", r.stderr)
	}
	if r := cli(t, nil, "help", "agent"); !strings.Contains(r.stdout, "Usage: agentnode agent <subcommand>") {
		t.Errorf("help agent: %q", r.stdout)
	}
	if r := cli(t, nil, "help", "nosuch"); exitCode(r.err) != 2 {
		t.Errorf("help nosuch: %v, want a usage error", r.err)
	}
}
