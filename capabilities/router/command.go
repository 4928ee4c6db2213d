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

// parseCommand splits "/switch note add milk" into ("/switch", "note",
// "add milk") and "/back hello" into ("/back", "", "hello"). A message
// that starts with neither command returns cmd "". Commands are
// case-insensitive and must be followed by whitespace or the end.
func parseCommand(msg string) (cmd, arg, rest string) {
	s := strings.TrimLeftFunc(msg, unicode.IsSpace)
	head, tail := cutWord(s)
	switch strings.ToLower(head) {
	case cmdBack:
		return cmdBack, "", strings.TrimSpace(tail)
	case cmdSwitch:
		arg, tail = cutWord(strings.TrimLeftFunc(tail, unicode.IsSpace))
		return cmdSwitch, arg, strings.TrimSpace(tail)
	}
	return "", "", msg
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
			return r.routeOn(conv, rest)
		}
		return Decision{Reason: ReasonBack, Reply: "Nothing to go back from: you are talking to the agent itself."}
	}
	popped := r.convs.pop(conv)
	if rest != "" {
		return r.routeOn(conv, rest)
	}
	top := r.convs.top(conv)
	return Decision{Capability: top, Reason: ReasonBack,
		Reply: fmt.Sprintf("Left %s; back to %s.", r.label(popped), r.label(top))}
}

// switchTo pushes the named capability. "/switch <cap>" alone is answered
// here; "/switch <cap> <text>" sends <text> to it.
func (r *Router) switchTo(conv, name, rest string) Decision {
	if name == "" {
		return Decision{Capability: r.convs.top(conv), Reason: ReasonSwitch,
			Reply: "Usage: /switch <capability>. Installed: " + r.installedList() + "."}
	}
	c := r.lookup(name)
	if c == nil {
		return Decision{Capability: r.convs.top(conv), Reason: ReasonSwitch,
			Reply: fmt.Sprintf("Unknown capability %q. Installed: %s.", name, r.installedList())}
	}
	r.convs.push(conv, c.ID)
	d := Decision{Capability: c.ID, Message: rest, Reason: ReasonSwitch}
	if rest == "" {
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
