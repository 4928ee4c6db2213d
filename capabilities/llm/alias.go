package llm

import (
	"regexp"
	"strconv"
	"strings"
)

// maxToolName is the longest function name OpenAI accepts.
const maxToolName = 64

var validToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// aliases maps tool names to wire names and back for one request. Names
// already valid keep themselves; others are sanitised (every other char
// becomes '_', cut to 64) and, on a collision, suffixed _2, _3, ...
type aliases struct {
	toWire   map[string]string
	fromWire map[string]string
}

// newAliases assigns wire names to names, valid names first so that a
// real tool called state_create keeps its name and state.create yields.
func newAliases(names []string) *aliases {
	a := &aliases{toWire: map[string]string{}, fromWire: map[string]string{}}
	for _, n := range names {
		if validToolName.MatchString(n) {
			a.bind(n, n)
		}
	}
	for _, n := range names {
		if _, done := a.toWire[n]; !done {
			a.bind(n, a.free(sanitize(n)))
		}
	}
	return a
}

func (a *aliases) bind(name, wire string) {
	if _, dup := a.fromWire[wire]; dup {
		return
	}
	a.toWire[name] = wire
	a.fromWire[wire] = name
}

// free returns base, or base with the first suffix not yet taken.
func (a *aliases) free(base string) string {
	if _, taken := a.fromWire[base]; !taken {
		return base
	}
	for i := 2; ; i++ {
		suf := "_" + strconv.Itoa(i)
		cand := base
		if len(cand)+len(suf) > maxToolName {
			cand = cand[:maxToolName-len(suf)]
		}
		if _, taken := a.fromWire[cand+suf]; !taken {
			return cand + suf
		}
	}
}

// wire returns name's wire name; a name not offered in this request (a
// tool call from history) is sanitised the same way.
func (a *aliases) wire(name string) string {
	if w, ok := a.toWire[name]; ok {
		return w
	}
	return sanitize(name)
}

// name maps a wire name back; an unknown one (a name the model made up)
// is returned as is.
func (a *aliases) name(wire string) string {
	if n, ok := a.fromWire[wire]; ok {
		return n
	}
	return wire
}

func sanitize(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r < 128 && (r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" {
		s = "tool"
	}
	if len(s) > maxToolName {
		s = s[:maxToolName]
	}
	return s
}
