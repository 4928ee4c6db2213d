package agentrpc_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/contextvm"
	"github.com/agentnode/agentnode/agentd/nostrrpc"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/jsonrpc"
)

// protocols are the node's JSON-RPC protocols: the codes each may answer
// and the heading of its table in docs/JSONRPC.md.
var protocols = []struct {
	heading string
	tables  [][]jsonrpc.CodeDoc
}{
	{"### CAP", [][]jsonrpc.CodeDoc{jsonrpc.StandardCodes, cap.Codes}},
	{"### Agent Context Protocol", [][]jsonrpc.CodeDoc{jsonrpc.StandardCodes, agentrpc.Codes}},
	{"### MCP and ContextVM", [][]jsonrpc.CodeDoc{jsonrpc.StandardCodes, contextvm.Codes}},
	{"### Legacy kind-25910 dialect", [][]jsonrpc.CodeDoc{jsonrpc.StandardCodes, nostrrpc.Codes, agentrpc.Codes}},
	// one node serves both over HTTP: a client of both must not have to
	// ask which endpoint a code came from
	{"", [][]jsonrpc.CodeDoc{jsonrpc.StandardCodes, agentrpc.Codes, cap.Codes}},
}

func TestCodes_noCollisionWithinAProtocol(t *testing.T) {
	for _, p := range protocols {
		seen := map[int]string{}
		for _, table := range p.tables {
			for _, c := range table {
				if prev, dup := seen[c.Code]; dup {
					t.Errorf("%q: %d is both %q and %q", p.heading, c.Code, prev, c.Name)
				}
				seen[c.Code] = c.Name
			}
		}
	}
}

func TestCodes_documented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/JSONRPC.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range protocols[:len(protocols)-1] {
		section := sectionOf(string(doc), p.heading)
		if section == "" {
			t.Errorf("docs/JSONRPC.md has no %q section", p.heading)
			continue
		}
		for _, table := range p.tables[1:2] { // the protocol's own
			for _, c := range table {
				if !strings.Contains(section, fmt.Sprintf("`%d`", c.Code)) {
					t.Errorf("docs/JSONRPC.md %q does not list %d (%s)", p.heading, c.Code, c.Name)
				}
			}
		}
	}
}

// sectionOf is the text under heading up to the next heading of its level.
func sectionOf(doc, heading string) string {
	i := strings.Index(doc, heading)
	if i < 0 {
		return ""
	}
	rest := doc[i+len(heading):]
	if j := strings.Index(rest, "\n### "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}
