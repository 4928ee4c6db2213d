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
// value they produce is escaped by the template like any other string.
var funcs = template.FuncMap{
	"npub":     npub,
	"short":    short,
	"when":     when,
	"clip":     clip,
	"join":     func(v []string) string { return strings.Join(v, ", ") },
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

// clip cuts s to at most n runes, marking the cut.
func clip(n int, s string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n])) + "…"
}
