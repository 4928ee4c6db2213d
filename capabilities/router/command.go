package router

import (
	"fmt"
	"strings"
	"unicode"
)

// Commands a user types at the start of a message.
const (
	cmdBack   = "/back"
	cmdSwitch = "/switch"
)

// parseCommand splits "/switch Weather Reporter what now" into
// ("/switch", "Weather Reporter what now") and "/back hello" into
// ("/back", "hello"). A message that starts with neither command returns
// cmd "". Commands are case-insensitive and must be followed by
// whitespace or the end.
func parseCommand(msg string) (cmd, rest string) {
	s := strings.TrimLeftFunc(msg, unicode.IsSpace)
	head, tail := cutWord(s)
	switch strings.ToLower(head) {
	case cmdBack, cmdSwitch:
		return strings.ToLower(head), strings.TrimSpace(tail)
	}
	return "", msg
}

// splitName finds the capability /switch names: the longest run of
// leading words that names one ("Weather Reporter" before "Weather"), and
// the text after it. No run names one: c is nil and name is the first
// word.
func (r *Router) splitName(s string) (c *compiled, name, rest string) {
	ends := wordEnds(s)
	for i := len(ends) - 1; i >= 0; i-- {
		if c := r.lookup(s[:ends[i]]); c != nil {
			return c, s[:ends[i]], strings.TrimSpace(s[ends[i]:])
		}
	}
	name, _ = cutWord(s)
	return nil, name, ""
}

// wordEnds returns the offset where each word of s ends.
func wordEnds(s string) []int {
	var ends []int
	in := false
	for i, c := range s {
		sp := unicode.IsSpace(c)
		if in && sp {
			ends = append(ends, i)
		}
		in = !sp
	}
	if in {
		ends = append(ends, len(s))
	}
	return ends
}

// cutWord returns s up to the first whitespace, and the remainder.
func cutWord(s string) (word, tail string) {
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// back pops the stack. "/back" alone is answered here; "/back <text>"
// routes <text> as if it came alone, after the pop.
func (r *Router) back(conv, rest string) Decision {
	if r.convs.top(conv) == "" {
		if rest != "" {
			return r.routeOn(conv, rest, nil) // text triggers only: the embedding was of the whole command
		}
		return Decision{Reason: ReasonBack, Reply: "Nothing to go back from: you are talking to the agent itself."}
	}
	popped := r.convs.pop(conv)
	if rest != "" {
		return r.routeOn(conv, rest, nil) // text triggers only: the embedding was of the whole command
	}
	top := r.convs.top(conv)
	return Decision{Capability: top, Reason: ReasonBack,
		Reply: fmt.Sprintf("Left %s; back to %s.", r.label(popped), r.label(top))}
}

// switchTo pushes the named capability. "/switch <cap>" alone is answered
// here; "/switch <cap> <text>" sends <text> to it. <cap> may be several
// words (a display name): the longest leading run that names one wins.
func (r *Router) switchTo(conv, arg string) Decision {
	if arg == "" {
		return Decision{Capability: r.convs.top(conv), Reason: ReasonSwitch,
			Reply: "Usage: /switch <capability>. Installed: " + r.installedList() + "."}
	}
	c, name, rest := r.splitName(arg)
	if c == nil {
		return Decision{Capability: r.convs.top(conv), Reason: ReasonSwitch,
			Reply: fmt.Sprintf("Unknown capability %q. Installed: %s.", name, r.installedList())}
	}
	d := r.enter(conv, c, Decision{Message: rest, Reason: ReasonSwitch})
	if d.Reason == ReasonSwitch && rest == "" {
		d.Reply = fmt.Sprintf("Switched to %s. Type /back to leave it.", r.label(c.ID))
	}
	return d
}

func (r *Router) installedList() string {
	if len(r.installed) == 0 {
		return "none"
	}
	names := make([]string, len(r.installed))
	for i := range r.installed {
		names[i] = strings.TrimPrefix(r.installed[i].ID, "did:nuwa:cap:")
	}
	return strings.Join(names, ", ")
}
