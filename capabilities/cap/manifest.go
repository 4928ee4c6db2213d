package cap

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/agentnode/agentnode/capabilities/acp"
)

// CapURIPrefix prefixes every capability id this node mints.
const CapURIPrefix = "did:nuwa:cap:"

// SkillInputSchema is the input_schema of every package skill: the user's
// message.
var SkillInputSchema = json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The user's message to the capability."}},"required":["message"],"additionalProperties":false}`)

// ManifestsFor maps an ACP package to CAP manifests: first the package as a
// skill (capability_id did:nuwa:cap:<name>, input {message}, the package
// prompt as prompt_template, its schema as a resource, permissions.require
// as required_permissions), then one tool per package tool
// (did:nuwa:cap:<name>/<tool>, input_schema = the tool's parameters with
// {$ref: "#/schema"} resolved to the package schema). Every manifest has
// the package's version. docs/CAP.md states the mapping.
func ManifestsFor(p *acp.Package) []Manifest {
	name, version := p.Name(), p.Version()
	if name == "" { // not from acp.Parse
		name, version = splitCapID(p.Metadata.ID)
	}
	out := []Manifest{skillManifest(p, name, version)}
	for _, t := range p.Tools {
		out = append(out, toolManifest(p, name, version, t.Function))
	}
	return out
}

func skillManifest(p *acp.Package, name, version string) Manifest {
	perms := append([]string{}, p.Metadata.Permissions.Require...)
	m := Manifest{
		CapabilityID: CapURIPrefix + name, Version: version, Kind: KindSkill,
		Name: p.Metadata.Name, Description: p.Metadata.Description,
		InputSchema: SkillInputSchema, RequiredPermissions: perms,
		Resources: []Resource{},
	}
	if p.Prompt != "" {
		prompt := p.Prompt
		m.PromptTemplate = &prompt
	}
	if uri := schemaID(p.Schema); uri != "" {
		m.Resources = append(m.Resources, Resource{URI: uri, Name: "schema", MediaType: "application/schema+json"})
	}
	return m
}

func toolManifest(p *acp.Package, name, version string, f acp.Function) Manifest {
	m := Manifest{
		CapabilityID: CapURIPrefix + name + "/" + f.Name, Version: version, Kind: KindTool,
		Name: f.Name, Description: f.Description,
		InputSchema: resolveSchemaRef(f.Parameters, p.Schema),
	}
	if len(f.OutputSchema) > 0 { // the package's function.output_schema
		m.OutputSchema = resolveSchemaRef(f.OutputSchema, p.Schema)
	}
	return m
}

// splitCapID splits did:nuwa:cap:<name>@<semver> (the prefix is optional).
func splitCapID(id string) (name, version string) {
	id = strings.TrimPrefix(id, CapURIPrefix)
	name, version, _ = strings.Cut(id, "@")
	return name, version
}

// schemaID returns the $id of a package schema, or "".
func schemaID(schema json.RawMessage) string {
	var s struct {
		ID string `json:"$id"`
	}
	_ = json.Unmarshal(schema, &s)
	return s.ID
}

// resolveSchemaRef replaces every {"$ref": "#/schema"} in params with the
// package schema (without its $id and $schema, which are not valid inside
// another document). A parser that resolved them already leaves nothing to
// do. Empty params become an empty object schema.
func resolveSchemaRef(params, schema json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(params)) == 0 || string(params) == "null" {
		return json.RawMessage(`{"type":"object"}`)
	}
	if !bytes.Contains(params, []byte(`#/schema`)) || len(schema) == 0 {
		return params
	}
	var doc any
	var sch map[string]any
	if json.Unmarshal(params, &doc) != nil || json.Unmarshal(schema, &sch) != nil {
		return params
	}
	delete(sch, "$id")
	delete(sch, "$schema")
	out, err := json.Marshal(replaceRef(doc, sch))
	if err != nil {
		return params
	}
	return out
}

func replaceRef(v any, schema map[string]any) any {
	switch t := v.(type) {
	case map[string]any:
		if ref, ok := t["$ref"].(string); ok && ref == "#/schema" && len(t) == 1 {
			return schema
		}
		for k, e := range t {
			t[k] = replaceRef(e, schema)
		}
	case []any:
		for i, e := range t {
			t[i] = replaceRef(e, schema)
		}
	}
	return v
}
