package agentd_test

import (
	"path/filepath"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/recordstest"
)

// TestFileRecords_conformance: agents.json handles that share one file are
// one process's (the file store is for one instance): the suite opens one
// and hands it out.
func TestFileRecords_conformance(t *testing.T) {
	recordstest.Run(t, func(t *testing.T) recordstest.Open {
		r, err := agentd.OpenFileRecords(filepath.Join(t.TempDir(), "agents.json"))
		if err != nil {
			t.Fatal(err)
		}
		return func() agentd.Records { return r }
	})
}
