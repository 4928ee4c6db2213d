package acp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/capabilities/acp"
)

func TestParse_SpecExamples(t *testing.T) {
	tests := []struct {
		file, name, version, schema, scope string
		tools                              []string
		bindings                           map[string]acp.Binding
	}{
		{"note.acp.yaml", "note", "1.0.0", "did:nuwa:state:note#v1", "sc:note",
			[]string{"state.create", "fetch_web_content", "recognize_image_content"},
			map[string]acp.Binding{
				"fetch_web_content":       {Type: acp.BindMCPService, ServiceURI: "did:nuwa:mcp:webscraper:version1", MCPAction: "extract_text_content"},
				"recognize_image_content": {Type: acp.BindMCPService, ServiceURI: "did:nuwa:mcp:visiondescribers:stable", MCPAction: "describe_image_from_url"},
			}},
		{"weatherreporter.acp.yaml", "weatherreporter", "1.0.0", "did:nuwa:state:weatherreporter#v1", "sc:weather",
			[]string{"get_current_weather", "send_notification"},
			map[string]acp.Binding{
				"get_current_weather": {Type: acp.BindHTTPGet, URL: "https://api.open-meteo.com/v1/forecast"},
				"send_notification":   {Type: acp.BindNuwaA2A, TargetDID: "{contact_did}", ServiceMethod: "receiveSimpleMessage"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw := readTestdata(t, tt.file)
			p := mustParse(t, raw)
			if p.Name() != tt.name || p.Version() != tt.version || p.URI() != acp.CapURI(tt.name, tt.version) {
				t.Errorf("name, version, uri = %q %q %q", p.Name(), p.Version(), p.URI())
			}
			if p.SchemaURI() != tt.schema || p.Metadata.MemoryScope != tt.scope {
				t.Errorf("schema %q scope %q", p.SchemaURI(), p.Metadata.MemoryScope)
			}
			if got := p.ToolNames(); !slices.Equal(got, tt.tools) {
				t.Errorf("tools %v, want %v", got, tt.tools)
			}
			if fmt.Sprint(p.Bindings) != fmt.Sprint(tt.bindings) {
				t.Errorf("bindings\n got %+v\nwant %+v", p.Bindings, tt.bindings)
			}
			if string(p.Raw) != string(raw) || !json.Valid(p.Schema) {
				t.Error("Raw is not the file, or Schema is not JSON")
			}
		})
	}
}

func TestParse_NoteDetails(t *testing.T) {
	p := mustParse(t, note(t))
	m := p.Metadata
	if m.Name != "Note" || !strings.HasPrefix(m.Description, "Create & manage") {
		t.Errorf("name %q description %q", m.Name, m.Description)
	}
	if !slices.Equal(m.Permissions.Require, []string{"state.create", "state.update", "state.query"}) {
		t.Errorf("permissions %v", m.Permissions.Require)
	}
	if m.LLM == nil || m.LLM.MinContextWindow != 16000 || !slices.Equal(m.LLM.ModelFamily, []string{"gpt-4", "claude-3"}) {
		t.Errorf("llm %+v", m.LLM)
	}
	if !strings.HasPrefix(p.Prompt, "You are Note Assistant.\n") {
		t.Errorf("prompt %q", p.Prompt)
	}
	for text, want := range map[string]bool{"记一个笔记": true, "please add note about cats": true, "weather today": false} {
		if got := p.Matches(text); got != want {
			t.Errorf("Matches(%q) = %v, want %v", text, got, want)
		}
	}
	tool, ok := p.Tool("fetch_web_content")
	if !ok || tool.Type != "function" || !strings.Contains(string(tool.Function.Parameters), `"url"`) {
		t.Errorf("Tool(fetch_web_content) = %+v, %v", tool, ok)
	}
	if _, ok := p.Tool("nope"); ok {
		t.Error("Tool(nope) found")
	}
}

func TestPackage_ToolParameters_InlinesSchema(t *testing.T) {
	p := mustParse(t, note(t))
	raw, ok := p.ToolParameters("state.create")
	if !ok {
		t.Fatal("no parameters for state.create")
	}
	var params struct {
		Properties struct {
			Object map[string]any `json:"object"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &params); err != nil {
		t.Fatal(err)
	}
	obj := params.Properties.Object
	if obj["$ref"] != nil || obj["$id"] != nil || obj["$schema"] != nil || obj["type"] != "object" {
		t.Errorf("object not inlined: %v", obj)
	}
	if req, _ := obj["required"].([]any); len(req) != 5 {
		t.Errorf("inlined required = %v", obj["required"])
	}
	if _, ok := p.ToolParameters("nope"); ok {
		t.Error("parameters for an undeclared tool")
	}
}

func TestTrigger_Match(t *testing.T) {
	raw := replace(t, weather(t), `- {type: regex, value: "weather|forecast"}`,
		`- {type: keyword, value: "Umbrella"}
    - {type: embedding, value: "0xabc"}`)
	p := mustParse(t, raw)
	if !p.Matches("do I need an UMBRELLA?") || p.Matches("forecast") || p.Matches("0xabc") {
		t.Error("keyword triggers match case-insensitively; embedding triggers never match")
	}
	if p.Matches("an umbrellastand") || !p.Matches("umbrella, please") {
		t.Error("keyword triggers match whole words (as the router does)")
	}
}

// Every mutation is refused with a problem at the right line and field.
func TestParse_Refusals(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		line     int
		field    string
		msg      string
	}{
		{"id without version", "id: did:nuwa:cap:note@1.0.0", "id: did:nuwa:cap:Note",
			3, "metadata.id", `"did:nuwa:cap:Note" is not did:nuwa:cap:<name>@<semver>`},
		{"id with a bad semver", "id: did:nuwa:cap:note@1.0.0", "id: did:nuwa:cap:note@1.0",
			3, "metadata.id", `"1.0" is not a semantic version`},
		{"id semver leading zero", "id: did:nuwa:cap:note@1.0.0", "id: did:nuwa:cap:note@01.0.0",
			3, "metadata.id", "not a semantic version"},
		{"id other method", "id: did:nuwa:cap:note@1.0.0", "id: did:web:note@1.0.0",
			3, "metadata.id", "is not did:nuwa:cap:<name>@<semver>"},
		{"name missing", `  name: "Note"` + "\n", "",
			3, "metadata.name", "required"},
		{"name empty", `name: "Note"`, `name: " "`, 4, "metadata.name", "must not be empty"},
		{"bad trigger regex", `value: "记(.*)笔记|note|add note about"`, `value: "note("`,
			7, "metadata.triggers[0].value", "does not compile"},
		{"unknown trigger type", `{type: regex, value:`, `{type: vibes, value:`,
			7, "metadata.triggers[0].type", `unknown trigger type "vibes"`},
		{"empty keyword", `{type: regex, value: "记(.*)笔记|note|add note about"}`, `{type: keyword, value: ""}`,
			7, "metadata.triggers[0].value", "must not be empty"},
		{"memory scope", "memory_scope: sc:note", "memory_scope: note",
			8, "metadata.memory_scope", `"note" is not sc:<name>`},
		{"unknown permission", `"state.query"]`, `"state.query", "state.everything"]`,
			10, "metadata.permissions.require[3]", `unknown permission "state.everything"`},
		{"missing permission", `require: ["state.create", "state.update", "state.query"]`, `require: ["state.update", "state.query"]`,
			10, "metadata.permissions.require", `must include "state.create": tool "state.create" (line 45) needs it`},
		{"min_context_window not int", "min_context_window: 16000", "min_context_window: lots",
			13, "metadata.llm_requirements.min_context_window", "non-negative integer"},
		{"schema not JSON", `"type":"object",`, `"type":"object"`,
			19, "schema", "not JSON"}, // where the missing comma is noticed
		{"schema bad $id", `"$id":"did:nuwa:state:note#v1"`, `"$id":"note"`,
			17, "schema.$id", `"note" is not a schema URI`},
		{"schema other draft", `"$schema":"https://json-schema.org/draft/2020-12/schema"`, `"$schema":"http://json-schema.org/draft-07/schema#"`,
			16, "schema.$schema", "2020-12"},
		{"schema does not compile", `"type":"object",`, `"type":"objekt",`,
			18, "schema", "does not compile as JSON Schema 2020-12: at /type: value must be one of"},
		{"schema property does not compile", `"body":{"type":"string"`, `"body":{"type":"strin"`,
			22, "schema", "at /properties/body/type: value must be one of"},
		{"schema unknown x-crdt", `"x-crdt":"lww_register"`, `"x-crdt":"lww"`,
			21, "schema", `/properties/title/x-crdt: unknown CRDT "lww"`},
		{"schema external ref", `"id":{"type":"string","format":"uuid"}`, `"id":{"$ref":"https://example.com/id.json"}`,
			16, "schema", "does not compile"},
		{"binding for an undeclared tool", `  "fetch_web_content":
    type: "mcp_service"`, `  "fetch_web_contents":
    type: "mcp_service"`, 72, "tool_bindings.fetch_web_contents", `binds "fetch_web_contents", which tools does not declare`},
		{"binding missing mcp_action", `    mcp_action: "extract_text_content"
`, "", 73, "tool_bindings.fetch_web_content.mcp_action", "required"},
		{"tool name with space", "name: fetch_web_content", "name: fetch web content",
			55, "tools[1].function.name", `"fetch web content" is not a tool name`},
		{"tool declared twice", "name: recognize_image_content", "name: fetch_web_content",
			64, "tools[2].function.name", `tool "fetch_web_content" is declared twice (first at line 55)`},
		{"tool type", "  - type: function\n    function:\n      name: fetch_web_content", "  - type: tool\n    function:\n      name: fetch_web_content",
			53, "tools[1].type", `must be "function"`},
		{"parameters not an object schema", "          url: {type: string, format: uri, description: \"The URL of the web page to fetch content from.\"}\n        required: [url]",
			"          url: {type: string, format: uri}\n        required: url", 61, "tools[1].function.parameters", "does not compile as JSON Schema 2020-12: at /required: got string, want array"},
		{"parameters $ref into a missing part of the schema", `object: {$ref: "#/schema"}`, `object: {$ref: "#/schema/properties/nope"}`,
			48, "tools[0].function.parameters", "not found"},
		{"parameters type array", "      parameters:\n        type: object\n        properties:\n          url:", "      parameters:\n        type: array\n        properties:\n          url:",
			58, "tools[1].function.parameters", `"type": "object"`},
		{"unknown top-level section", "tool_bindings:", "tool_binding:", 71, "tool_binding", "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			perr := parseErr(t, replace(t, note(t), tt.old, tt.new), acp.Options{})
			if !perr.Has(tt.line, tt.field, tt.msg) {
				t.Errorf("want line %d: %s: ...%s...\ngot:\n%v", tt.line, tt.field, tt.msg, perr)
			}
		})
	}
}

// What the spec leaves open is accepted, kept and reported as a warning
// (docs/INTEROP.md). These five were refusals before the interop issue:
// NIP-7 leaves metadata open, writes signature as a string, makes a tool
// with no binding an error only when called, and lists binding types that
// "include but are not limited to" the four.
func TestParse_Warnings(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		line     int
		field    string
		msg      string
	}{
		{"unknown metadata field", `  memory_scope: sc:note`, "  memory_scope: sc:note\n  colour: red",
			9, "metadata.colour", "not read by agentnode (kept as written)"},
		{"tool without binding", `  "recognize_image_content":
    type: "mcp_service"
    service_uri: "did:nuwa:mcp:visiondescribers:stable" # Example MCP service URI
    mcp_action: "describe_image_from_url"
`, "", 64, "tools", `tool "recognize_image_content" is not built in and has no entry in tool_bindings: calling it is an error`},
		{"binding unknown type", `type: "mcp_service"
    service_uri: "did:nuwa:mcp:webscraper:version1"`, `type: "grpc"
    service_uri: "did:nuwa:mcp:webscraper:version1"`, 73, "tool_bindings.fetch_web_content.type", `binding type "grpc" is not one agentnode runs`},
		{"binding field of another type", `mcp_action: "extract_text_content"`, `mcp_action: "extract_text_content"
    url: "https://x.example"`, 76, "tool_bindings.fetch_web_content.url", "not a field of mcp_service bindings"},
		{"llm_requirements field beyond the four", "min_context_window: 16000", "min_context_window: 16000\n    max_latency_ms: 800",
			14, "metadata.llm_requirements.max_latency_ms", "kept as written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, replace(t, note(t), tt.old, tt.new))
			if !(&acp.ParseError{Problems: p.Warnings}).Has(tt.line, tt.field, tt.msg) {
				t.Errorf("want warning line %d: %s: ...%s...\ngot: %v", tt.line, tt.field, tt.msg, p.Warnings)
			}
		})
	}
}

// Kept fields come back as written; an unknown binding type is kept and
// not callable; the string signature is kept for Verify.
func TestParse_KeepsOpenFields(t *testing.T) {
	raw := replace(t, note(t), "  memory_scope: sc:note", "  memory_scope: sc:note\n  author: did:key:z6MkAlice\n  license: MIT\n  signature: zDIDSig1xyz")
	raw = replace(t, raw, "min_context_window: 16000", "min_context_window: 16000\n    max_latency_ms: 800")
	raw = replace(t, raw, `type: "mcp_service"
    service_uri: "did:nuwa:mcp:webscraper:version1"`, `type: "grpc"
    endpoint: "grpc://x"
    service_uri: "did:nuwa:mcp:webscraper:version1"`)
	p := mustParse(t, raw)
	if got := p.Metadata.Extra; got["author"] != "did:key:z6MkAlice" || got["license"] != "MIT" {
		t.Errorf("metadata extra = %v", got)
	}
	if got := fmt.Sprint(p.Metadata.LLM.Extra["max_latency_ms"]); got != "800" {
		t.Errorf("llm extra max_latency_ms = %s", got)
	}
	if p.Metadata.Signature == nil || p.Metadata.Signature.DIDKey != "zDIDSig1xyz" {
		t.Errorf("signature = %+v", p.Metadata.Signature)
	}
	b := p.Bindings["fetch_web_content"]
	if b.Type != "grpc" || b.Callable() || b.Extra["endpoint"] != "grpc://x" || b.Extra["mcp_action"] != "extract_text_content" {
		t.Errorf("grpc binding = %+v callable=%v", b, b.Callable())
	}
	if !p.Bindings["recognize_image_content"].Callable() {
		t.Error("the mcp_service binding is not callable")
	}
}

func TestParse_WeatherBindingRefusals(t *testing.T) {
	tests := []struct {
		name, old, new, field, msg string
		line                       int
	}{
		{"http url relative", `url: "https://api.open-meteo.com/v1/forecast"`, `url: "/v1/forecast"`,
			"tool_bindings.get_current_weather.url", `"/v1/forecast" is not an absolute http(s) URL`, 47},
		{"http url ftp", `url: "https://api.open-meteo.com/v1/forecast"`, `url: "ftp://api.open-meteo.com/x"`,
			"tool_bindings.get_current_weather.url", "not an absolute http(s) URL", 47},
		{"a2a without method", `    service_method: "receiveSimpleMessage"` + "\n", "",
			"tool_bindings.send_notification.service_method", "required", 53},
		{"a2a empty target", `target_did: "{contact_did}"`, `target_did: ""`,
			"tool_bindings.send_notification.target_did", "must not be empty", 54},
		{"binding a built-in", "tool_bindings:\n", "tool_bindings:\n  \"state.query\": {type: http_get, url: \"https://x.example\"}\n",
			"tool_bindings.state.query", "is a built-in tool: it cannot be bound", 45},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			perr := parseErr(t, replace(t, weather(t), tt.old, tt.new), acp.Options{})
			if !perr.Has(tt.line, tt.field, tt.msg) {
				t.Errorf("want line %d: %s: ...%s...\ngot:\n%v", tt.line, tt.field, tt.msg, perr)
			}
		})
	}
}

// All problems come back at once, in line order, one per line of Error().
func TestParse_AllProblemsAtOnce(t *testing.T) {
	raw := replace(t, note(t), "id: did:nuwa:cap:note@1.0.0", "id: did:nuwa:cap:note")
	raw = replace(t, raw, "memory_scope: sc:note", "memory_scope: note")
	raw = replace(t, raw, `mcp_action: "extract_text_content"`, `mcp_action: ""`)
	perr := parseErr(t, raw, acp.Options{})
	if len(perr.Problems) != 3 {
		t.Fatalf("got %d problems, want 3:\n%v", len(perr.Problems), perr)
	}
	lines := strings.Split(perr.Error(), "\n")
	want := []string{"line 3: metadata.id: ", "line 8: metadata.memory_scope: ", "line 75: tool_bindings.fetch_web_content.mcp_action: "}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d of Error() = %q, want prefix %q", i, lines[i], w)
		}
	}
}

func TestParse_CheckSchemaHook(t *testing.T) {
	var gotURI string
	var gotSchema json.RawMessage
	opts := acp.Options{CheckSchema: func(uri string, schema json.RawMessage) error {
		gotURI, gotSchema = uri, schema
		return errors.New("x-asm: container must be object")
	}}
	perr := parseErr(t, note(t), opts)
	if !perr.Has(16, "schema", "x-asm: container must be object") {
		t.Errorf("hook error not reported at the schema:\n%v", perr)
	}
	if gotURI != "did:nuwa:state:note#v1" || !json.Valid(gotSchema) || !strings.Contains(string(gotSchema), `"x-crdt":"rga_text"`) {
		t.Errorf("hook got %q %s", gotURI, gotSchema)
	}
}

func TestParse_SchemaAsMapping(t *testing.T) {
	raw := replace(t, weather(t), `schema: |
  {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "did:nuwa:state:weatherreporter#v1",
    "type": "object",
    "properties": {
      "lastForecastLocation": {"type": "string"}
    }
  }`, `schema:
  $id: "did:nuwa:state:weatherreporter#v1"
  type: object
  x-asm: {container: object, crdt: or_map}
  properties:
    lastForecastLocation: {type: string, x-crdt: lww_register}
    hits: {type: integer, minimum: 0}`)
	p := mustParse(t, raw)
	if p.SchemaURI() != "did:nuwa:state:weatherreporter#v1" || !strings.Contains(string(p.Schema), `"minimum":0`) {
		t.Errorf("schema %s", p.Schema)
	}
	bad := replace(t, raw, "crdt: or_map", "crdt: ormap")
	if perr := parseErr(t, bad, acp.Options{}); !perr.Has(14, "schema", `/x-asm/crdt: unknown CRDT "ormap"`) {
		t.Errorf("x-asm.crdt not checked:\n%v", perr)
	}
}

func TestParse_MalformedFiles(t *testing.T) {
	tests := []struct {
		name, raw string
		line      int
		msg       string
	}{
		{"empty", "", 0, "empty file"},
		{"not a mapping", "- a\n- b\n", 1, "must be a YAML mapping"},
		{"bad YAML", "metadata:\n  id: [\n", 2, "not YAML"},
		{"two documents", "metadata: {}\n---\nschema: x\n", 2, "more than one YAML document"},
		{"alias", "metadata: &m\n  id: x\nschema: *m\n", 1, "anchors and aliases"},
		{"missing sections", "prompt: hi\n", 1, "required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			perr := parseErr(t, []byte(tt.raw), acp.Options{})
			p := perr.Problems[0]
			if p.Line != tt.line || !strings.Contains(p.Msg, tt.msg) {
				t.Errorf("got %v, want line %d ...%s...", perr, tt.line, tt.msg)
			}
		})
	}
}

func TestParseCapURI(t *testing.T) {
	tests := []struct {
		in, name, version string
		ok                bool
	}{
		{"did:nuwa:cap:note@1.0.0", "note", "1.0.0", true},
		{"did:nuwa:cap:note", "note", "", true},
		{"note@2.1.0-rc.1+build.5", "note", "2.1.0-rc.1+build.5", true},
		{"did:nuwa:cap:note@1.0", "", "", false},
		{"did:nuwa:cap:note@v1.0.0", "", "", false},
		{"did:nuwa:cap:@1.0.0", "", "", false},
		{"did:nuwa:cap:no te@1.0.0", "", "", false},
		{"did:nuwa:cap:note@1.0.0-01", "", "", false},
	}
	for _, tt := range tests {
		name, version, err := acp.ParseCapURI(tt.in)
		if (err == nil) != tt.ok || name != tt.name || version != tt.version {
			t.Errorf("ParseCapURI(%q) = %q, %q, %v", tt.in, name, version, err)
		}
		if err != nil && !errors.Is(err, acp.ErrBadCapURI) {
			t.Errorf("ParseCapURI(%q): %v does not wrap ErrBadCapURI", tt.in, err)
		}
	}
}

// The package's copy of the CRDT names is the runtime's registry.
func TestCRDTNames_MatchRuntime(t *testing.T) {
	if got, want := acp.CRDTNames(), crdt.Names(); !slices.Equal(got, want) {
		t.Errorf("acp knows %v, the runtime %v", got, want)
	}
}

// A $ref into the schema ("#/schema/properties/x") inlines that part;
// keywords beside the $ref win.
func TestPackage_ToolParameters_SchemaPointer(t *testing.T) {
	raw := replace(t, weather(t), `location: {type: string, description: "The city and state, e.g., San Francisco, CA"}`,
		`location: {$ref: "#/schema/properties/lastForecastLocation", description: "a city"}`)
	p := mustParse(t, raw)
	params, _ := p.ToolParameters("get_current_weather")
	if !strings.Contains(string(params), `"location":{"description":"a city","type":"string"}`) {
		t.Errorf("parameters %s", params)
	}
	if tool, _ := p.Tool("get_current_weather"); string(tool.Function.Parameters) != string(params) {
		t.Errorf("Function.Parameters %s, ToolParameters %s", tool.Function.Parameters, params)
	}
}
