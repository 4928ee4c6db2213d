package agentd_test

import (
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/filestest"
)

func TestDirFiles_conformance(t *testing.T) {
	filestest.Run(t, func(t *testing.T) filestest.Open {
		dir := t.TempDir()
		return func() agentd.AgentFiles { return agentd.DirFiles{Dir: dir} }
	})
}
