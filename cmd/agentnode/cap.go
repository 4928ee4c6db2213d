package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/capabilities/acp"
)

// readPackage reads and parses an .acp.yaml file ("-" is stdin). A package
// that breaks rules is an error listing every problem, one per line. The
// schema's x-asm annotations are checked as `agent cap install` checks them
// (agentd/state/schema.Parse), so that sign, verify and publish refuse what
// install would.
func readPackage(m *Main, cmd, file string) ([]byte, *acp.Package, error) {
	raw, err := readFileOrStdin(m, file)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", cmd, err)
	}
	p, err := acp.Parse(raw, acp.Options{})
	if err == nil && len(p.Schema) > 0 {
		p, err = acp.Parse(raw, acp.Options{CheckSchema: xasmCheck(p.Metadata.ID)})
	}
	if err != nil {
		return raw, nil, packageError(cmd, file, err)
	}
	return raw, p, nil
}

// xasmCheck is the install-time check of a package schema declared by the
// capability capID: it compiles as an ASM schema (x-asm, x-crdt,
// lifecycle annotations, namespace).
func xasmCheck(capID string) func(string, json.RawMessage) error {
	return func(_ string, raw json.RawMessage) error {
		_, err := schema.Parse(raw, capID)
		return err
	}
}

// packageError renders a *acp.ParseError as `<file>:<line>: field: msg`
// lines; it still wraps the ParseError (and so acp.ErrInvalid).
func packageError(cmd, file string, err error) error {
	var perr *acp.ParseError
	if !errors.As(err, &perr) {
		return fmt.Errorf("%s: %s: %w", cmd, file, err)
	}
	return &packageProblems{cmd: cmd, file: file, perr: perr}
}

// packageProblems is an invalid package as the CLI reports it.
type packageProblems struct {
	cmd, file string
	perr      *acp.ParseError
}

func (e *packageProblems) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s: %d problem(s):", e.cmd, e.file, len(e.perr.Problems))
	for _, p := range e.perr.Problems {
		fmt.Fprintf(&b, "\n  %s:%d: %s", e.file, p.Line, problemText(p))
	}
	return b.String()
}

func (e *packageProblems) Unwrap() error { return e.perr }

func problemText(p acp.Problem) string {
	if p.Field == "" {
		return p.Msg
	}
	return p.Field + ": " + p.Msg
}

// fileArg returns the one positional argument.
func fileArg(cmd string, pos []string) (string, error) {
	switch len(pos) {
	case 0:
		return "", usagef("%s: which file? (give a path to an .acp.yaml, or - for stdin)", cmd)
	case 1:
		return pos[0], nil
	}
	return "", usagef("%s: unexpected argument %q", cmd, pos[1])
}

// writeFileAtomic replaces path with data (same mode when it exists).
func writeFileAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".acp-sign-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
