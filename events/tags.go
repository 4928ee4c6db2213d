package events

import (
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// tagAt returns t[i], or "" when the tag is shorter.
func tagAt(t nostr.Tag, i int) string {
	if len(t) > i {
		return t[i]
	}
	return ""
}

// isTag reports whether t is named name.
func isTag(t nostr.Tag, name string) bool { return len(t) > 0 && t[0] == name }

// firstTag returns the first tag named name, or nil.
func firstTag(tags nostr.Tags, name string) nostr.Tag {
	for _, t := range tags {
		if isTag(t, name) {
			return t
		}
	}
	return nil
}

// firstValue returns the value of the first tag named name and whether there is one.
func firstValue(tags nostr.Tags, name string) (string, bool) {
	t := firstTag(tags, name)
	return tagAt(t, 1), t != nil
}

// valueOf returns the value of the first tag named name, or "".
func valueOf(tags nostr.Tags, name string) string {
	v, _ := firstValue(tags, name)
	return v
}

// valuesOf returns the values of every tag named name, in order (nil if none).
func valuesOf(tags nostr.Tags, name string) []string {
	var out []string
	for _, t := range tags {
		if isTag(t, name) {
			out = append(out, tagAt(t, 1))
		}
	}
	return out
}

// countTags counts the tags named name.
func countTags(tags nostr.Tags, name string) int {
	n := 0
	for _, t := range tags {
		if isTag(t, name) {
			n++
		}
	}
	return n
}

// appendOpt appends [name, value] unless value is empty.
func appendOpt(tags nostr.Tags, name, value string) nostr.Tags {
	if value == "" {
		return tags
	}
	return append(tags, nostr.Tag{name, value})
}

// appendEach appends one [name, v] per value.
func appendEach(tags nostr.Tags, name string, values []string) nostr.Tags {
	for _, v := range values {
		tags = append(tags, nostr.Tag{name, v})
	}
	return tags
}

// blank reports whether s is empty or only white space.
func blank(s string) bool { return strings.TrimSpace(s) == "" }

// parseKind parses a decimal kind number in 0..65535 (digits only).
func parseKind(s string) (int, bool) {
	if s == "" || len(s) > 5 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n <= 65535
}

// kindOf returns the parsed kind in the first tag named name, if it has one.
func kindOf(tags nostr.Tags, name string) (int, bool) {
	v, ok := firstValue(tags, name)
	if !ok {
		return 0, false
	}
	return parseKind(v)
}

// dedupe returns values without repeats, first occurrence kept (nil if empty).
func dedupe(values []string) []string {
	var out []string
	seen := make(map[string]bool, len(values))
	for _, v := range values {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
