package acp

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// bindingFields lists, per binding type, the fields it must have.
var bindingFields = map[string][]string{
	BindHTTPGet:    {"url"},
	BindHTTPPost:   {"url"},
	BindMCPService: {"service_uri", "mcp_action"},
	BindNuwaA2A:    {"target_did", "service_method"},
}

// bindings checks tool_bindings: a mapping of tool name -> binding.
func (ps *parser) bindings(e entry) {
	if e.val == nil {
		return
	}
	ps.pkg.Bindings = map[string]Binding{}
	for name, b := range ps.fields(e.val, "tool_bindings") {
		ps.bindingKeys[name] = b.key
		if bd, ok := ps.binding(b); ok {
			ps.pkg.Bindings[name] = bd
		}
	}
}

// binding reads one binding. The spec's binding types "include but are
// not limited to" the four: another type is kept with its fields in Extra
// and marked not callable; a field a known type does not take is kept in
// Extra too. Both are warnings.
func (ps *parser) binding(e entry) (Binding, bool) {
	f := ps.fields(e.val, e.path)
	ps.require(e.val, f, e.path, "type")
	x, ok := f["type"]
	if !ok {
		return Binding{}, false
	}
	typ, ok := ps.nonBlank(x, x.path)
	if !ok {
		return Binding{}, false
	}
	need, known := bindingFields[typ]
	n := len(ps.probs)
	b := Binding{Type: typ}
	if !known {
		ps.warn(x.val, x.path, "binding type %q is not one agentnode runs (it runs %s): the tool is listed but not callable",
			typ, strings.Join(bindingTypes(), ", "))
	}
	ps.bindingValues(e, f, need, known, &b)
	return b, len(ps.probs) == n
}

// bindingValues requires need, keeps fields of other types, fills b.
func (ps *parser) bindingValues(e entry, f map[string]entry, need []string, known bool, b *Binding) {
	ps.require(e.val, f, e.path, need...)
	dst := map[string]*string{"url": &b.URL, "service_uri": &b.ServiceURI, "mcp_action": &b.MCPAction,
		"target_did": &b.TargetDID, "service_method": &b.ServiceMethod}
	for _, k := range sortedKeys(f) {
		x := f[k]
		switch {
		case k == "type":
		case contains(need, k):
			*dst[k], _ = ps.nonBlank(x, x.path)
		default:
			b.Extra = ps.keepQuiet(b.Extra, x)
			if known {
				ps.warn(x.key, x.path, "not a field of %s bindings (it takes %s): kept, not read", b.Type, strings.Join(need, ", "))
			}
		}
	}
	if x, ok := f["url"]; ok && b.URL != "" && !isHTTPURL(b.URL) {
		ps.add(x.val, x.path, "%q is not an absolute http(s) URL", b.URL)
	}
}

func bindingTypes() []string {
	out := make([]string, 0, len(bindingFields))
	for k := range bindingFields {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// crossCheck ties the sections together: every non-built-in tool has a
// binding, every binding names a declared tool that is not built in, and
// permissions.require covers the built-in tools used.
func (ps *parser) crossCheck() {
	ps.unboundTools()
	ps.strayBindings()
	ps.missingPermissions()
}

// unboundTools warns of a tool that is neither built in nor bound: the
// spec makes that an error only when the tool is called ("the runtime may
// not be able to execute it").
func (ps *parser) unboundTools() {
	for _, t := range ps.pkg.Tools {
		name := t.Function.Name
		if _, bound := ps.pkg.Bindings[name]; !bound && !IsBuiltin(name) && !ps.bindingFailed(name) {
			ps.warns = append(ps.warns, Problem{Line: ps.toolLine[name], Field: "tools",
				Msg: fmt.Sprintf("tool %q is not built in and has no entry in tool_bindings: calling it is an error", name)})
		}
	}
}

// bindingFailed reports whether tool_bindings has a key name (that was
// already reported as invalid).
func (ps *parser) bindingFailed(name string) bool {
	return ps.bindingKeys[name] != nil
}

func (ps *parser) strayBindings() {
	for name, key := range ps.bindingKeys {
		switch {
		case IsBuiltin(name):
			ps.add(key, "tool_bindings."+name, "%q is a built-in tool: it cannot be bound", name)
		case ps.toolLine[name] == 0:
			ps.add(key, "tool_bindings."+name, "binds %q, which tools does not declare", name)
		}
	}
}

func (ps *parser) missingPermissions() {
	have := ps.pkg.Metadata.Permissions.Require
	for _, t := range ps.pkg.Tools {
		need := builtinPermission[t.Function.Name]
		if need != "" && !contains(have, need) {
			have = append(have, need) // once per permission
			ps.problem(ps.permsLine, ps.permsField, "must include %q: tool %q (line %d) needs it", need, t.Function.Name, ps.toolLine[t.Function.Name])
		}
	}
}

func sortedKeys(f map[string]entry) []string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
