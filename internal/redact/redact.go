package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask is what stands in for a hidden secret.
const Mask = "***"

// URL returns s with its userinfo replaced by Mask and the value of every
// query parameter and the fragment replaced by Mask; the scheme, host,
// port, path and query keys stay. A string that does not parse as a URL
// is redacted by its shape (anything between "://" and "@", anything
// after "?"), so that a malformed URL leaks no more than a good one.
func URL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" {
		return byShape(s)
	}
	if u.User == nil && u.RawQuery == "" && u.Fragment == "" {
		return s // nothing to hide: shown as given
	}
	if u.User != nil {
		u.User = url.User(Mask)
	}
	if u.RawQuery != "" {
		u.RawQuery = maskQuery(u.RawQuery)
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = Mask, ""
	}
	return unescapeMask(u.String())
}

// maskQuery keeps each key of a raw query and masks its value, in order.
func maskQuery(raw string) string {
	parts := strings.FieldsFunc(raw, func(r rune) bool { return r == '&' || r == ';' })
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok {
			parts[i] = k + "=" + Mask
		} else {
			parts[i] = Mask
		}
	}
	return strings.Join(parts, "&")
}

// unescapeMask undoes url.URL.String's escaping of the mask's asterisks.
func unescapeMask(s string) string {
	return strings.ReplaceAll(s, "%2A%2A%2A", Mask)
}

// byShape redacts what does not parse: userinfo before '@' in the
// authority, and everything after '?' or '#'.
func byShape(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i+1] + Mask
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		rest = Mask + rest[at:]
	}
	return scheme + "://" + rest
}

// urlRE finds URLs with an authority in free text.
var urlRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>` + "`" + `]+`)

// Text redacts every URL in s (an error message, a log line).
func Text(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlRE.ReplaceAllStringFunc(s, URL)
}

// Error wraps err so that its text has every URL redacted (Text); errors.Is
// and errors.As still see err. nil stays nil.
func Error(err error) error {
	if err == nil {
		return nil
	}
	return redacted{err}
}

type redacted struct{ err error }

func (r redacted) Error() string { return Text(r.err.Error()) }
func (r redacted) Unwrap() error { return r.err }
