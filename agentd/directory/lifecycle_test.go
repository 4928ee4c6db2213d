package directory_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/internal/testkit"
)

func TestDirectory_Lifecycle(t *testing.T) {
	if err := directory.New(directory.Config{}).Start(context.Background()); err == nil {
		t.Error("Start without a Source succeeded")
	}
	env := newEnv(t)
	d := directory.New(directory.Config{Source: env.rel, Now: env.clk.Now, Logger: quiet})
	if err := d.Close(); err != nil {
		t.Errorf("Close before Start: %v", err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); !errors.Is(err, directory.ErrAlreadyStarted) {
		t.Errorf("second Start: %v", err)
	}
	a := testkit.NewKey(t)
	beat(t, env.rel, a, env.clk.Now(), directory.Status{})
	agentWhere(t, d, a.PK, "listed", func(directory.Agent) bool { return true })
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// Closed, the index stays readable; started again, it catches up from the relay.
	if _, ok := d.Get(a.PK); !ok {
		t.Error("Close emptied the index")
	}
	b := testkit.NewKey(t)
	beat(t, env.rel, b, env.clk.Now(), directory.Status{})
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Get(b.PK); !ok {
		t.Error("restart did not load what the relay stored meanwhile")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
