package relay

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestOpen_DataDirInUse: a second Open of a data directory in use fails
// with ErrDataDirInUse naming the holder's pid; after Close it opens.
func TestOpen_DataDirInUse(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first, err := Open(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, Config{DataDir: dir})
	if !errors.Is(err, ErrDataDirInUse) || !strings.Contains(err.Error(), "(pid "+strconv.Itoa(os.Getpid())+")") {
		t.Fatalf("second Open: %v, want %v naming pid %d", err, ErrDataDirInUse, os.Getpid())
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	again.Close(ctx)
}
