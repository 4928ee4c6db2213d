package store

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/agentnode/agentnode/agentd/state/crdt"
)

// Large strings are encoded apart: json.Marshal grows its buffer by
// doubling and copies the result out (≈ 3× a large value, the buffer then
// kept in encoding/json's pool). marshalBig encodes the value with each
// string of at least bigString bytes replaced by a placeholder, then
// splices the strings in, escaped exactly as encoding/json escapes them,
// into one buffer of the final size. The output is byte for byte
// json.Marshal's (TestMarshalBig_MatchesMarshal).
const bigString = 64 << 10

// placeholderNonce makes placeholders unguessable by document content.
var placeholderNonce = func() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

func placeholder(i int) string {
	return "\x00asm-big-" + string(rune('a'+i%26)) + hex.EncodeToString([]byte{byte(i >> 8), byte(i)}) + "-" + placeholderNonce + "\x00"
}

// marshalBig is json.Marshal(v) for a value whose large strings were
// replaced by placeholder(i) for bigs[i].
func marshalBig(v any, bigs []string) ([]byte, error) {
	small, err := json.Marshal(v)
	if err != nil || len(bigs) == 0 {
		return small, err
	}
	type hole struct{ at, n, big int }
	holes := make([]hole, 0, len(bigs))
	size := len(small)
	for i, s := range bigs {
		ph, _ := json.Marshal(placeholder(i))
		at := bytes.Index(small, ph)
		if at < 0 {
			return json.Marshal(v) // cannot happen; stay correct anyway
		}
		holes = append(holes, hole{at, len(ph), i})
		size += jsonStringLen(s) - len(ph)
	}
	slices.SortFunc(holes, func(a, b hole) int { return a.at - b.at })
	out := make([]byte, 0, size)
	prev := 0
	for _, h := range holes {
		out = append(out, small[prev:h.at]...)
		out = appendJSONString(out, bigs[h.big])
		prev = h.at + h.n
	}
	return append(out, small[prev:]...), nil
}

// marshalDocument is json.Marshal of a materialised document.
func marshalDocument(doc map[string]any) ([]byte, error) {
	var bigs []string
	v, _ := replaceBig(doc, &bigs)
	return marshalBig(v, bigs)
}

// replaceBig returns v with its large strings replaced by placeholders
// (maps and slices on the way copied; v is not changed) and whether it
// replaced any.
func replaceBig(v any, bigs *[]string) (any, bool) {
	switch x := v.(type) {
	case string:
		if len(x) >= bigString {
			*bigs = append(*bigs, x)
			return placeholder(len(*bigs) - 1), true
		}
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			r, changed := replaceBig(e, bigs)
			if !changed {
				continue
			}
			if out == nil {
				out = make(map[string]any, len(x))
				for k2, e2 := range x {
					out[k2] = e2
				}
			}
			out[k] = r
		}
		if out != nil {
			return out, true
		}
	case []any:
		var out []any
		for i, e := range x {
			r, changed := replaceBig(e, bigs)
			if !changed {
				continue
			}
			if out == nil {
				out = slices.Clone(x)
			}
			out[i] = r
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

// opBody is json.Marshal(e) for an envelope whose op (or nested op) may
// carry a large rga_text insert.
func opBody(e Envelope) ([]byte, error) {
	var bigs []string
	e.Op = withBigText(e.Op, &bigs)
	return marshalBig(e, bigs)
}

func withBigText(op crdt.Op, bigs *[]string) crdt.Op {
	if len(op.Text) >= bigString {
		*bigs = append(*bigs, op.Text)
		op.Text = placeholder(len(*bigs) - 1)
	}
	if op.Child != nil {
		c := withBigText(*op.Child, bigs)
		op.Child = &c
	}
	return op
}

// jsonStringLen is len(appendJSONString(nil, s)).
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case htmlSafe(b):
				n++
			case b == '\\' || b == '"' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			default:
				n += 6
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			n += 6
		case c == '\u2028' || c == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// htmlSafe mirrors encoding/json's htmlSafeSet.
func htmlSafe(b byte) bool {
	return b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
}

const hexDigits = "0123456789abcdef"

// appendJSONString mirrors encoding/json's appendString with HTML escaping
// (json.Marshal's default).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if htmlSafe(b) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
