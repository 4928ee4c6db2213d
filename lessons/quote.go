package lessons

import (
	"strings"
	"unicode"
)

// quote writes text with every line prefixed by "> ", after sanitize, so no
// published line can start a line of the prompt: it cannot close its block,
// open another, or pose as a heading.
func quote(b *strings.Builder, text string) {
	text = strings.Trim(sanitize(text), "\n")
	for line := range strings.SplitSeq(text, "\n") {
		b.WriteString("> ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
}

// oneLine sanitizes s onto a single line with single spaces, at most 200 runes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(sanitize(s)), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// sanitize makes every line break a "\n" (CR, CRLF, NEL, U+2028, U+2029,
// vertical tab, form feed) and drops other control and format characters
// (bidi overrides, zero-width characters), keeping tabs.
func sanitize(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r' || r == '\v' || r == '\f' || r == '\u0085' || r == '\u2028' || r == '\u2029':
			return '\n'
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
}
