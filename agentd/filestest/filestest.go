// Package filestest is the conformance suite of agentd.AgentFiles: the
// directory (DirFiles) and agentd/agentpg run it.
//
//	filestest.Run(t, func(t *testing.T) filestest.Open {
//		dir := t.TempDir()
//		return func() agentd.AgentFiles { return agentd.DirFiles{Dir: dir} }
//	})
package filestest

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/agentnode/agentnode/agentd"
)

// Open returns a new handle on one backing.
type Open func() agentd.AgentFiles

// Fresh makes an empty backing and returns how to open handles on it.
type Fresh func(t *testing.T) Open

const (
	agentA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	agentB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// Run runs the suite.
func Run(t *testing.T, fresh Fresh) {
	t.Run("WriteRead", func(t *testing.T) { writeRead(t, fresh(t)) })
	t.Run("Remove", func(t *testing.T) { remove(t, fresh(t)) })
	t.Run("BadPath", func(t *testing.T) { badPath(t, fresh(t)) })
}

func writeRead(t *testing.T, open Open) {
	ctx := context.Background()
	f := open()
	if err := f.Write(ctx, agentA, "caps.json", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := f.Write(ctx, agentA, "caps/x@1.0.0.acp.yaml", []byte{0, 1, 2, 255}); err != nil {
		t.Fatal(err)
	}
	if err := f.Write(ctx, agentA, "caps.json", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	other := open()
	if b, err := other.Read(ctx, agentA, "caps.json"); err != nil || string(b) != "v2" {
		t.Errorf("Read caps.json = %q, %v; want v2", b, err)
	}
	if b, err := other.Read(ctx, agentA, "caps/x@1.0.0.acp.yaml"); err != nil || string(b) != "\x00\x01\x02\xff" {
		t.Errorf("Read package = %q, %v", b, err)
	}
	if _, err := other.Read(ctx, agentB, "caps.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of another agent's file: %v, want fs.ErrNotExist", err)
	}
}

func remove(t *testing.T, open Open) {
	ctx := context.Background()
	f := open()
	f.Write(ctx, agentA, "caps.json", []byte("a"))
	f.Write(ctx, agentA, "caps/p.yaml", []byte("p"))
	f.Write(ctx, agentB, "caps.json", []byte("b"))
	if err := f.Remove(ctx, agentA, "caps/p.yaml"); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove(ctx, agentA, "caps/p.yaml"); err != nil {
		t.Errorf("Remove of a missing file: %v", err)
	}
	if _, err := open().Read(ctx, agentA, "caps/p.yaml"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read after Remove: %v", err)
	}
	if err := f.RemoveAll(ctx, agentA); err != nil {
		t.Fatal(err)
	}
	if _, err := open().Read(ctx, agentA, "caps.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read after RemoveAll: %v", err)
	}
	if b, err := open().Read(ctx, agentB, "caps.json"); err != nil || string(b) != "b" {
		t.Errorf("RemoveAll of a touched b: %q, %v", b, err)
	}
}

func badPath(t *testing.T, open Open) {
	ctx := context.Background()
	f := open()
	for _, rel := range []string{"", "../x", "caps/../../x", "/etc/passwd"} {
		if err := f.Write(ctx, agentA, rel, []byte("x")); err == nil {
			t.Errorf("Write(%q) accepted", rel)
		}
	}
}
