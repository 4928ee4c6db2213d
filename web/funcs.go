package web

import (
	"html/template"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// funcs are the templates' helpers. None returns template.HTML: every
// value they produce is escaped by the template like any other string
// (nostrURI's template.URL is a checked bech32 code, share.go).
var funcs = template.FuncMap{
	"nevent":   nevent,
	"nostrURI": nostrURI,
	"target":   target,
	"npub":     npub,
	"short":    short,
	"when":     when,
	"clip":     clip,
	"clipped":  clipped,
	"title":    func(s string) string { return clip(maxTitle, s) },
	"field":    func(s string) string { return clip(maxFieldRunes, s) },
	"long":     func(s string) string { return clip(maxTextRunes, s) },
	"excerpt":  func(s string) string { return clip(MaxLessonRunes, s) },
	"cut":      func(n int, s string) int { return max(utf8.RuneCountInString(s)-n, 0) },
	"join":     func(v []string) string { return clip(maxFieldRunes, strings.Join(v[:min(len(v), 100)], ", ")) },
	"score":    func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"add":      func(a, b int) int { return a + b },
	"nonempty": func(s string) bool { return strings.TrimSpace(s) != "" },
}

// npub encodes a hex pubkey ("" stays "", an undecodable one stays as is).
func npub(hex string) string {
	if hex == "" {
		return ""
	}
	s, err := nip19.EncodePublicKey(hex)
	if err != nil {
		return hex
	}
	return s
}

// short abbreviates a long key or id for display: npub1abcd…wxyz.
func short(s string) string {
	if len(s) <= 20 {
		return s
	}
	return s[:10] + "…" + s[len(s)-6:]
}

// when formats a time (time.Time or nostr.Timestamp) in UTC.
func when(v any) string {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case nostr.Timestamp:
		t = x.Time()
	}
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// Rendered sizes: every field a stranger writes is cut on the page
// (docs/WEB.md#bounds); the whole event stays in the store.
const (
	maxTitle       = 200    // a title or name, in runes
	MaxLessonRunes = 2000   // a lesson's text in a list (its own page shows it whole)
	maxFieldRunes  = 2000   // a definition's role, description, use criteria
	maxTextRunes   = 20_000 // a definition's instructions and markdown
)

// clip cuts s to at most n runes, marking the cut.
func clip(n int, s string) string {
	if len(s) <= n {
		return s
	}
	i, runes := 0, 0
	for i < len(s) && runes < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		runes++
	}
	if i >= len(s) {
		return s
	}
	return strings.TrimSpace(s[:i]) + "…"
}

// clipped reports whether clip(n, s) cuts s.
func clipped(n int, s string) bool {
	return len(s) > n && utf8.RuneCountInString(s) > n
}
