package acp

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// metadata checks the metadata section.
func (ps *parser) metadata(e entry) {
	if e.val == nil {
		return
	}
	f, extra := ps.openFields(e.val, "metadata", "id", "name", "description", "triggers", "memory_scope",
		"permissions", "llm_requirements", "signature")
	ps.require(e.val, f, "metadata", "id", "name")
	m := &ps.pkg.Metadata
	m.Extra = extra
	ps.permsLine, ps.permsField = e.val.Line, "metadata.permissions.require"
	if x, ok := f["id"]; ok {
		ps.capID(x)
	}
	if x, ok := f["name"]; ok {
		m.Name, _ = ps.nonBlank(x, x.path)
	}
	if x, ok := f["description"]; ok {
		m.Description, _ = ps.str(x, x.path)
	}
	if x, ok := f["triggers"]; ok {
		m.Triggers = ps.triggers(x)
	}
	if x, ok := f["memory_scope"]; ok {
		m.MemoryScope = ps.memoryScope(x)
	}
	if x, ok := f["permissions"]; ok {
		ps.permissions(x)
	}
	if x, ok := f["llm_requirements"]; ok {
		m.LLM = ps.llm(x)
	}
	if x, ok := f["signature"]; ok {
		m.Signature = ps.signature(x)
	}
}

func (ps *parser) capID(e entry) {
	id, ok := ps.str(e, e.path)
	if !ok {
		return
	}
	name, version, why := parseCapID(id)
	if why != "" {
		ps.add(e.val, e.path, "%s", why)
		return
	}
	ps.pkg.Metadata.ID, ps.pkg.name, ps.pkg.version = id, name, version
}

func (ps *parser) memoryScope(e entry) string {
	s, ok := ps.str(e, e.path)
	if ok && !scopeRE.MatchString(s) {
		ps.add(e.val, e.path, "%q is not sc:<name>", s)
		return ""
	}
	return s
}

// triggers checks each {type, value}: regexes compile, keywords are not empty.
func (ps *parser) triggers(e entry) []Trigger {
	if e.val.Kind != yaml.SequenceNode {
		ps.add(e.val, e.path, "must be a list of {type, value}")
		return nil
	}
	var out []Trigger
	for i, item := range e.val.Content {
		if t, ok := ps.trigger(item, fmt.Sprintf("%s[%d]", e.path, i)); ok {
			out = append(out, t)
		}
	}
	return out
}

func (ps *parser) trigger(n *yaml.Node, path string) (Trigger, bool) {
	f := ps.fields(n, path, "type", "value")
	ps.require(n, f, path, "type", "value")
	typ, okT := f["type"]
	val, okV := f["value"]
	if !okT || !okV {
		return Trigger{}, false
	}
	t := Trigger{}
	var ok bool
	if t.Type, ok = ps.str(typ, typ.path); !ok {
		return t, false
	}
	if t.Value, ok = ps.str(val, val.path); !ok {
		return t, false
	}
	return t, ps.compileTrigger(&t, typ, val)
}

func (ps *parser) compileTrigger(t *Trigger, typ, val entry) bool {
	switch t.Type {
	case TriggerRegex:
		re, err := regexp.Compile(t.Value)
		if err != nil {
			ps.add(val.val, val.path, "regex %q does not compile: %s", t.Value, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			return false
		}
		t.re = re
	case TriggerKeyword, TriggerEmbedding:
		if strings.TrimSpace(t.Value) == "" {
			ps.add(val.val, val.path, "must not be empty")
			return false
		}
		if t.Type == TriggerEmbedding {
			ps.warn(val.val, val.path, "embedding trigger: matched only on a node with an embedding model (serve config router.embedding_model), never matched without one; add a keyword or regex trigger to route to the capability everywhere")
		}
	default:
		ps.add(typ.val, typ.path, "unknown trigger type %q (known: regex, keyword, embedding)", t.Type)
		return false
	}
	return true
}

// permissions checks permissions.require: known strings only.
func (ps *parser) permissions(e entry) {
	f := ps.fields(e.val, e.path, "require")
	ps.permsLine = e.val.Line
	x, ok := f["require"]
	if !ok {
		return
	}
	ps.permsLine = x.val.Line
	for i, p := range ps.strList(x, x.path) {
		if !contains(knownPermissions, p) {
			ps.add(x.val.Content[i], fmt.Sprintf("%s[%d]", x.path, i), "unknown permission %q (known: %s)", p, strings.Join(knownPermissions, ", "))
			continue
		}
		ps.pkg.Metadata.Permissions.Require = append(ps.pkg.Metadata.Permissions.Require, p)
	}
}

// llm checks llm_requirements (advisory, but typed).
func (ps *parser) llm(e entry) *LLMRequires {
	f, extra := ps.openFields(e.val, e.path, "model_family", "specific_model_uri", "min_context_window", "required_features")
	l := &LLMRequires{Extra: extra}
	if x, ok := f["model_family"]; ok {
		l.ModelFamily = ps.strList(x, x.path)
	}
	if x, ok := f["specific_model_uri"]; ok {
		l.SpecificModelURI, _ = ps.nonBlank(x, x.path)
	}
	if x, ok := f["min_context_window"]; ok {
		if err := x.val.Decode(&l.MinContextWindow); err != nil || x.val.Tag != "!!int" || l.MinContextWindow < 0 {
			ps.add(x.val, x.path, "must be a non-negative integer")
		}
	}
	if x, ok := f["required_features"]; ok {
		l.RequiredFeatures = ps.strList(x, x.path)
	}
	return l
}

// signature checks the shape of metadata.signature; Verify checks the value.
// A string is the spec's DID-key form, kept as written.
func (ps *parser) signature(e entry) *Signature {
	if e.val.Kind == yaml.ScalarNode && e.val.Tag == "!!str" {
		s, ok := ps.nonBlank(e, e.path)
		if !ok {
			return nil
		}
		return &Signature{DIDKey: s}
	}
	if e.val.Kind != yaml.MappingNode {
		ps.add(e.val, e.path, "must be a DID-key string or a mapping {pubkey, sig}: sign the file with `agentnode cap sign`")
		return nil
	}
	f := ps.fields(e.val, e.path, "pubkey", "sig")
	ps.require(e.val, f, e.path, "pubkey", "sig")
	s := &Signature{}
	if x, ok := f["pubkey"]; ok {
		if s.PubKey, ok = ps.str(x, x.path); ok && !hex64RE.MatchString(s.PubKey) {
			ps.add(x.val, x.path, "not a 64-hex pubkey")
		}
	}
	if x, ok := f["sig"]; ok {
		if s.Sig, ok = ps.str(x, x.path); ok && !hex128RE.MatchString(s.Sig) {
			ps.add(x.val, x.path, "not a 128-hex signature")
		}
	}
	return s
}
