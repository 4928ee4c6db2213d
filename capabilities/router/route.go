package router

import (
	"regexp"
	"strings"

	"github.com/agentnode/agentnode/capabilities/acp"
)

// Route is one installed capability as the router sees it.
type Route struct {
	ID       string // did:nuwa:cap:<name>@<version>
	Name     string // display name (metadata.name)
	Triggers []acp.Trigger
	// LLM is metadata.llm_requirements: Options.Models are matched against
	// it when the capability is routed to (nil = any model).
	LLM *acp.LLMRequires
}

// Trigger types.
const (
	TriggerRegex     = "regex"
	TriggerKeyword   = "keyword"
	TriggerEmbedding = "embedding" // matches with Options.Embedder only
)

// compiled is a Route with its triggers ready to match.
type compiled struct {
	Route
	matchers []matcher
	embeds   []string // embedding triggers' texts
}

type matcher struct {
	value string
	match func(msg string) bool
}

// compile prepares r's triggers. A regex that does not compile is dropped
// (reported through bad); embedding triggers are kept aside (their texts,
// matched by Router.similarities when an Embedder is set).
func compile(r Route) (c compiled, bad []error) {
	c.Route = r
	for _, t := range r.Triggers {
		m, err := newMatcher(t)
		if err != nil {
			bad = append(bad, &TriggerError{Capability: r.ID, Trigger: t, Err: err})
			continue
		}
		switch {
		case m.match != nil:
			c.matchers = append(c.matchers, m)
		case m.value != "":
			c.embeds = append(c.embeds, m.value)
		}
	}
	return c, bad
}

func newMatcher(t acp.Trigger) (matcher, error) {
	switch strings.ToLower(t.Type) {
	case TriggerRegex:
		re, err := regexp.Compile(t.Value)
		if err != nil {
			return matcher{}, err
		}
		return matcher{value: t.Value, match: re.MatchString}, nil
	case TriggerKeyword:
		kw := strings.ToLower(strings.TrimSpace(t.Value))
		if kw == "" {
			return matcher{}, ErrEmptyKeyword
		}
		return matcher{value: t.Value, match: func(msg string) bool { return acp.MatchKeyword(msg, kw) }}, nil
	case TriggerEmbedding:
		return matcher{value: strings.TrimSpace(t.Value)}, nil
	}
	return matcher{}, ErrUnknownTrigger
}

// matchMessage returns the first trigger of c that matches msg.
func (c *compiled) matchMessage(msg string) (string, bool) {
	for _, m := range c.matchers {
		if m.match(msg) {
			return m.value, true
		}
	}
	return "", false
}

// score is how many of c's triggers match msg, and the first that does.
func (c *compiled) score(msg string) (n int, first string) {
	for _, m := range c.matchers {
		if m.match(msg) {
			if n == 0 {
				first = m.value
			}
			n++
		}
	}
	return n, first
}

// names returns the ways /switch may name c: full id, name@version,
// name, and the display name.
func (c *compiled) names() []string {
	out := []string{c.ID}
	short := strings.TrimPrefix(c.ID, "did:nuwa:cap:")
	if short != c.ID {
		out = append(out, short)
		if at := strings.LastIndex(short, "@"); at > 0 {
			out = append(out, short[:at])
		}
	}
	if c.Name != "" {
		out = append(out, c.Name)
	}
	return out
}

// RouteOf is the Route of a parsed package: its id, display name and
// triggers.
func RouteOf(p *acp.Package) Route {
	return Route{ID: p.Metadata.ID, Name: p.Metadata.Name, Triggers: p.Metadata.Triggers, LLM: p.Metadata.LLM}
}
