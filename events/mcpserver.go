package events

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// KindMCPServer is a NIP-AD MCP server announcement: a name, a
// description and the command that runs it over stdio.
const KindMCPServer = 4200

// MCPServer is a kind-4200 MCP server.
//
// Tags: ["name", …], ["description", …], ["command", <program>, <arg>…]
// (one value with spaces is split on white space, without a shell),
// ["args", <arg>…] appended to the command's, ["env", NAME, value] per
// environment variable the server is given, ["image", …] (shown, unused).
type MCPServer struct {
	ID          string
	PubKey      string
	Name        string
	Description string
	Command     []string // argv: the program, then its arguments
	Env         []string // NAME=value
	Image       string
}

// Bounds of a kind-4200 command (a stranger writes it).
const (
	MaxMCPArgs     = 64
	MaxMCPArgBytes = 4096
	MaxMCPEnv      = 32
)

// envName is a portable environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// reservedEnv are names the sandbox sets itself or that change how
// programs load: a 4200 may not set them.
func reservedEnv(name string) bool {
	switch strings.ToUpper(name) {
	case "PATH", "HOME", "LANG", "PWD", "SHELL", "IFS":
		return true
	}
	return strings.HasPrefix(strings.ToUpper(name), "LD_")
}

// Template is an unsigned kind-4200 event of s.
func (s MCPServer) Template() nostr.Event {
	tags := nostr.Tags{{"name", s.Name}}
	if s.Description != "" {
		tags = append(tags, nostr.Tag{"description", s.Description})
	}
	tags = append(tags, append(nostr.Tag{"command"}, s.Command...))
	for _, kv := range s.Env {
		k, v, _ := strings.Cut(kv, "=")
		tags = append(tags, nostr.Tag{"env", k, v})
	}
	if s.Image != "" {
		tags = append(tags, nostr.Tag{"image", s.Image})
	}
	return nostr.Event{Kind: KindMCPServer, Tags: tags, Content: s.Description}
}

// ParseMCPServer reads a kind-4200 event: it needs a name and a command
// of at most MaxMCPArgs elements of at most MaxMCPArgBytes each, and at
// most MaxMCPEnv env tags with portable names (PATH, HOME, LANG and LD_*
// refused).
func ParseMCPServer(evt *nostr.Event) (*MCPServer, error) {
	if evt == nil {
		return nil, ErrNilEvent
	}
	if evt.Kind != KindMCPServer {
		return nil, invalidBecause(evt.Kind, "kind", ErrWrongKind, "want 4200")
	}
	s := &MCPServer{ID: evt.ID, PubKey: evt.PubKey, Description: evt.Content}
	var args []string
	for _, t := range evt.Tags {
		if err := s.readTag(t, &args); err != nil {
			return nil, err
		}
	}
	s.Command = append(s.Command, args...)
	return s, s.check()
}

// readTag takes one tag of a 4200.
func (s *MCPServer) readTag(t nostr.Tag, args *[]string) error {
	if len(t) < 2 {
		return nil
	}
	switch t[0] {
	case "name", "title":
		if s.Name == "" {
			s.Name = t[1]
		}
	case "description":
		s.Description = t[1]
	case "image":
		s.Image = t[1]
	case "command":
		if s.Command != nil {
			return invalidBecause(KindMCPServer, "command", ErrBadTag, "more than one command tag")
		}
		s.Command = splitCommand(t[1:])
	case "args":
		*args = append(*args, t[1:]...)
	case "env":
		if !envName.MatchString(t[1]) || reservedEnv(t[1]) {
			return invalidBecause(KindMCPServer, "env", ErrBadValue, fmt.Sprintf("%q is not a name a server may set", clip(t[1], 64)))
		}
		v := ""
		if len(t) > 2 {
			v = t[2]
		}
		s.Env = append(s.Env, t[1]+"="+v)
	}
	return nil
}

// splitCommand is the command tag's argv: one value with white space is
// split on it (no shell, no quoting), several values are taken as they are.
func splitCommand(vals []string) []string {
	if len(vals) == 1 {
		return strings.Fields(vals[0])
	}
	return append([]string(nil), vals...)
}

// check enforces the bounds ParseMCPServer documents.
func (s *MCPServer) check() error {
	switch {
	case strings.TrimSpace(s.Name) == "":
		return invalid(KindMCPServer, "name", ErrMissingTag)
	case len(s.Command) == 0 || strings.TrimSpace(s.Command[0]) == "":
		return invalid(KindMCPServer, "command", ErrMissingTag)
	case len(s.Command) > MaxMCPArgs:
		return invalidBecause(KindMCPServer, "command", ErrBadValue, fmt.Sprintf("more than %d arguments", MaxMCPArgs))
	case len(s.Env) > MaxMCPEnv:
		return invalidBecause(KindMCPServer, "env", ErrBadValue, fmt.Sprintf("more than %d env tags", MaxMCPEnv))
	}
	for _, a := range append(append([]string(nil), s.Command...), s.Env...) {
		if len(a) > MaxMCPArgBytes || strings.ContainsRune(a, 0) {
			return invalidBecause(KindMCPServer, "command", ErrBadValue, fmt.Sprintf("an argument or env value is over %d bytes or holds a NUL", MaxMCPArgBytes))
		}
	}
	return nil
}
