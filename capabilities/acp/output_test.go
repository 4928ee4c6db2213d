package acp_test

import (
	"strings"
	"testing"

	"github.com/agentnode/agentnode/capabilities/acp"
)

// function.output_schema (or MCP's outputSchema) is read, compiled and
// kept with #/schema inlined; both at once, or one that is not a schema,
// is refused.
func TestParse_OutputSchema(t *testing.T) {
	const at = "      name: fetch_web_content\n"
	for _, key := range []string{"output_schema", "outputSchema"} {
		p := mustParse(t, replace(t, note(t), at, at+"      "+key+": {type: object, properties: {note: {$ref: \"#/schema\"}}}\n"))
		tool, _ := p.Tool("fetch_web_content")
		if s := string(tool.Function.OutputSchema); !strings.Contains(s, `"rga_text"`) || strings.Contains(s, "#/schema") {
			t.Errorf("%s: output schema %s, want #/schema inlined", key, s)
		}
	}
	both := replace(t, note(t), at, at+"      output_schema: {type: object}\n      outputSchema: {type: object}\n")
	if perr := parseErr(t, both, acp.Options{}); !perr.Has(0, "tools[1].function.outputSchema", "not both") {
		t.Errorf("both: %v", perr)
	}
	bad := replace(t, note(t), at, at+"      output_schema: {type: objekt}\n")
	if perr := parseErr(t, bad, acp.Options{}); !perr.Has(0, "tools[1].function.output_schema", "does not compile") {
		t.Errorf("bad: %v", perr)
	}
}
