package agentd_test

import (
	"os"
	"testing"

	"github.com/agentnode/agentnode/capabilities/bindings"
)

// TestMain lets the test binary start sandboxed MCP servers through
// itself, as agentnode does (bindings.SandboxExecMain).
func TestMain(m *testing.M) {
	bindings.SandboxExecMain()
	os.Exit(m.Run())
}
