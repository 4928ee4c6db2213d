package directory_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/internal/testkit"
)

func TestDirectory_Lifecycle(t *testing.T) {
	if err := directory.New(directory.Config{}).Run(context.Background()); err == nil {
		t.Error("Run without a Source succeeded")
	}
	env := newEnv(t)
	d := directory.New(directory.Config{Source: env.rel, Now: env.clk.Now, Logger: quiet})
	select {
	case <-d.Ready():
		t.Fatal("ready before Run")
	default:
	}
	stop := testkit.Run(t, "directory", d.Run, d.Ready())
	if err := d.Run(context.Background()); !errors.Is(err, directory.ErrAlreadyRunning) {
		t.Errorf("second Run: %v", err)
	}
	a := testkit.NewKey(t)
	beat(t, env.rel, a, env.clk.Now(), directory.Status{})
	agentWhere(t, d, a.PK, "listed", func(directory.Agent) bool { return true })
	stop()
	// Stopped, the index stays readable; run again, it catches up from the relay.
	if _, ok := d.Get(a.PK); !ok {
		t.Error("stopping emptied the index")
	}
	b := testkit.NewKey(t)
	beat(t, env.rel, b, env.clk.Now(), directory.Status{})
	// b was stored while nothing followed the relay: only a load finds it.
	testkit.Run(t, "directory again", d.Run, nil)
	agentWhere(t, d, b.PK, "loaded on the second Run", func(directory.Agent) bool { return true })
}
