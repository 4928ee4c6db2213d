package store

import (
	"context"
	"testing"
)

func TestStore_ChangedClosesOnCommit(t *testing.T) {
	ctx := context.Background()
	s, sch := openTest(t, t.TempDir(), "r")
	changed := s.Changed()
	select {
	case <-changed:
		t.Fatal("closed before any write")
	default:
	}
	if _, err := set(ctx, s, sch, "d", "one"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Fatal("not closed by a committed write")
	}
	next := s.Changed()
	if next == changed {
		t.Fatal("the same channel after a signal")
	}
	// A refused write commits nothing and signals nothing.
	_, err := s.Write(ctx, sch, "d", func(*Txn) error { return context.Canceled })
	if err == nil {
		t.Fatal("refused write succeeded")
	}
	select {
	case <-next:
		t.Fatal("closed by a write that did not commit")
	default:
	}
}

func TestStore_Settings(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, _ := openTest(t, dir, "")
	if v, err := s.LoadSetting(ctx, "replicate:x"); err != nil || v != "" {
		t.Fatalf("missing setting: %q, %v", v, err)
	}
	for _, v := range []string{"1", "42"} {
		if err := s.SaveSetting(ctx, "replicate:x", v); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := s.LoadSetting(ctx, "replicate:x"); v != "42" {
		t.Fatalf("got %q", v)
	}
	for _, key := range []string{"replica", "", ":x"} {
		if err := s.SaveSetting(ctx, key, "evil"); err == nil {
			t.Fatalf("key %q accepted", key)
		}
	}
	s.Close(ctx)
	s2, _ := openTest(t, dir, "")
	if v, _ := s2.LoadSetting(ctx, "replicate:x"); v != "42" {
		t.Fatalf("after reopen: %q", v)
	}
	if s2.Replica() != s.Replica() {
		t.Fatal("replica id changed")
	}
}
