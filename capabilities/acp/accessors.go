package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name returns the capability name from metadata.id (did:nuwa:cap:<name>@...).
func (p *Package) Name() string { return p.name }

// Version returns the semver from metadata.id.
func (p *Package) Version() string { return p.version }

// URI returns metadata.id, did:nuwa:cap:<name>@<semver>.
func (p *Package) URI() string { return p.Metadata.ID }

// SchemaURI returns the package schema's $id (did:nuwa:state:note#v1): the
// schema_uri state.* calls use.
func (p *Package) SchemaURI() string { return p.schemaURI }

// Tool returns the tool named name.
func (p *Package) Tool(name string) (Tool, bool) {
	for _, t := range p.Tools {
		if t.Function.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// ToolNames returns the declared tool names, in file order.
func (p *Package) ToolNames() []string {
	names := make([]string, len(p.Tools))
	for i, t := range p.Tools {
		names[i] = t.Function.Name
	}
	return names
}

// ToolParameters returns the parameters of the tool named name as a JSON
// Schema with every {"$ref": "#/schema"} replaced by a copy of the package
// schema (without its $id and $schema), ready to hand to a model.
func (p *Package) ToolParameters(name string) (json.RawMessage, bool) {
	params, ok := p.params[name]
	return bytes.Clone(params), ok
}

// IsBuiltin reports whether a tool name is one the runtime provides (the
// state.* family and lesson.learn): such tools need no binding.
func IsBuiltin(name string) bool {
	_, ok := builtinPermission[name]
	return ok
}

// Match reports whether the trigger matches text: a regex trigger by
// regular expression, a keyword trigger as a whole word or phrase,
// case-insensitively (MatchKeyword). An embedding trigger never matches
// here (text alone cannot): the router matches it with the node's
// embedding model, when one is configured (capabilities/router).
func (t Trigger) Match(text string) bool {
	switch t.Type {
	case TriggerRegex:
		return t.re != nil && t.re.MatchString(text)
	case TriggerKeyword:
		return MatchKeyword(text, t.Value)
	}
	return false
}

// MatchKeyword reports whether keyword occurs in text, case-insensitively,
// with no letter, digit or _ right before or after it: "note" matches
// "Take a NOTE:" but not "notebook"; a keyword of several words matches as
// a phrase. The router and the registry match keyword triggers this way.
func MatchKeyword(text, keyword string) bool {
	kw := strings.ToLower(strings.TrimSpace(keyword))
	if kw == "" {
		return false
	}
	s := strings.ToLower(text)
	for from := 0; from <= len(s)-len(kw); {
		i := strings.Index(s[from:], kw)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(kw)
		if !wordRuneBefore(s, start) && !wordRuneAfter(s, end) {
			return true
		}
		from = start + 1
	}
	return false
}

func wordRuneBefore(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return i > 0 && isWordRune(r)
}

func wordRuneAfter(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return i < len(s) && isWordRune(r)
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// Matches reports whether any of the package's triggers matches text.
func (p *Package) Matches(text string) bool {
	for _, t := range p.Metadata.Triggers {
		if t.Match(text) {
			return true
		}
	}
	return false
}

// NotCallable lists the declared tools the runtime cannot run, each as
// "name: reason": not built in and unbound, or bound with a type it does
// not run. They stay listed; calling one is an error.
func (p *Package) NotCallable() []string {
	var out []string
	for _, name := range p.ToolNames() {
		b, bound := p.Bindings[name]
		switch {
		case IsBuiltin(name):
		case !bound:
			out = append(out, name+": no binding")
		case !b.Callable():
			out = append(out, fmt.Sprintf("%s: binding type %q is not run here", name, b.Type))
		}
	}
	return out
}

// WarningStrings renders Warnings one per string.
func (p *Package) WarningStrings() []string {
	var out []string
	for _, w := range p.Warnings {
		out = append(out, w.String())
	}
	return out
}
