package dm_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/agentd/dm/ledgertest"
)

func TestFileLedger_conformance(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) ledgertest.Open {
		path := filepath.Join(t.TempDir(), "dm", "state.json")
		return func(w time.Duration) dm.Ledger {
			l, err := dm.OpenFileLedger(path, w)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
	})
}
