package tasks_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/agentd/tasks/taskstest"
)

func TestSQLite_conformance(t *testing.T) {
	taskstest.Run(t, func(t *testing.T) taskstest.Open {
		path := filepath.Join(t.TempDir(), "tasks.db")
		return func() tasks.Backend {
			b, err := tasks.OpenSQLite(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	})
}
