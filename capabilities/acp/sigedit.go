package acp

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"
)

// sigEdit is where Sign puts metadata.signature: raw[start:end] is
// replaced by the signature entry, indented by indent (+ step inside).
type sigEdit struct {
	raw          []byte
	start, end   int
	indent, step string
	nl           string
}

// render returns the file with the signature entry in place.
func (e *sigEdit) render(pubkey, sig string) []byte {
	var b bytes.Buffer
	b.Write(e.raw[:e.start])
	if e.start > 0 && e.raw[e.start-1] != '\n' && e.raw[e.start-1] != '\r' {
		b.WriteString(e.nl)
	}
	fmt.Fprintf(&b, "%ssignature:%s", e.indent, e.nl)
	fmt.Fprintf(&b, "%s%spubkey: %q%s", e.indent, e.step, pubkey, e.nl)
	fmt.Fprintf(&b, "%s%ssig: %q%s", e.indent, e.step, sig, e.nl)
	b.Write(e.raw[e.end:])
	return b.Bytes()
}

// renderScalar returns the file with `signature: "<value>"` in place.
func (e *sigEdit) renderScalar(value string) []byte {
	var b bytes.Buffer
	b.Write(e.raw[:e.start])
	if e.start > 0 && e.raw[e.start-1] != '\n' && e.raw[e.start-1] != '\r' {
		b.WriteString(e.nl)
	}
	fmt.Fprintf(&b, "%ssignature: %q%s", e.indent, value, e.nl)
	b.Write(e.raw[e.end:])
	return b.Bytes()
}

// newSigEdit locates the signature entry (or the end of metadata).
func newSigEdit(raw []byte) (*sigEdit, error) {
	if bytes.Contains(raw, []byte("\u0085")) || bytes.Contains(raw, []byte("\u2028")) || bytes.Contains(raw, []byte("\u2029")) {
		return nil, fmt.Errorf("acp: sign: the file contains Unicode line separators (U+0085, U+2028 or U+2029)")
	}
	root, prob := decodeDoc(raw)
	if prob != nil {
		return nil, &ParseError{Problems: []Problem{*prob}}
	}
	mi := keyIndex(root, "metadata")
	if mi < 0 {
		return nil, fmt.Errorf("acp: sign: no metadata section")
	}
	meta := root.Content[mi+1]
	if meta.Kind != yaml.MappingNode || meta.Style&yaml.FlowStyle != 0 || len(meta.Content) == 0 || meta.Content[0].Line <= root.Content[mi].Line {
		return nil, fmt.Errorf("acp: sign: line %d: metadata must be a block mapping (one field per line)", meta.Line)
	}
	starts := lineStarts(raw)
	e := &sigEdit{raw: raw, nl: newline(raw)}
	e.indent = leadingSpace(raw, starts, meta.Content[0].Line)
	e.step = "  "
	if ind := len(e.indent) - len(leadingSpace(raw, starts, root.Content[mi].Line)); ind > 0 {
		e.step = e.indent[:min(ind, len(e.indent))]
	}
	si := keyIndex(meta, "signature")
	next := nextKeyLine(root, mi, meta, si)
	e.end = trimTrailing(raw, starts, lineOffset(raw, starts, next), e.indent)
	e.start = e.end
	if si >= 0 {
		e.start = starts[meta.Content[si].Line-1]
		e.end = max(e.end, e.start)
	}
	return e, nil
}

// nextKeyLine is the line of the key after the signature entry (or after
// metadata's last entry when si < 0), or 0 for the end of the file.
func nextKeyLine(root *yaml.Node, mi int, meta *yaml.Node, si int) int {
	if si >= 0 && si+2 < len(meta.Content) {
		return meta.Content[si+2].Line
	}
	if mi+2 < len(root.Content) {
		return root.Content[mi+2].Line
	}
	return 0
}

func keyIndex(n *yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// lineStarts returns the byte offset of each line (line 1 at index 0);
// "\r\n", "\n" and "\r" end a line, as in yaml.v3.
func lineStarts(raw []byte) []int {
	starts := []int{0}
	for i := 0; i < len(raw); i++ {
		switch {
		case raw[i] == '\r' && i+1 < len(raw) && raw[i+1] == '\n':
			i++
			starts = append(starts, i+1)
		case raw[i] == '\n' || raw[i] == '\r':
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineOffset is the offset of line (1-based); 0 or past the end = len(raw).
func lineOffset(raw []byte, starts []int, line int) int {
	if line <= 0 || line > len(starts) {
		return len(raw)
	}
	return starts[line-1]
}

func leadingSpace(raw []byte, starts []int, line int) string {
	i := lineOffset(raw, starts, line)
	j := i
	for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t') {
		j++
	}
	return string(raw[i:j])
}

// trimTrailing moves end back over whole blank lines and comment lines
// indented no deeper than indent: they belong to what follows.
func trimTrailing(raw []byte, starts []int, end int, indent string) int {
	for {
		prev := -1
		for k := len(starts) - 1; k >= 0; k-- {
			if starts[k] < end {
				prev = starts[k]
				break
			}
		}
		if prev < 0 || !looseLine(raw[prev:end], len(indent)) {
			return end
		}
		end = prev
	}
}

// looseLine reports whether a line is blank, or a comment indented at
// most indent columns.
func looseLine(line []byte, indent int) bool {
	t := bytes.TrimLeft(line, " \t")
	if len(bytes.TrimSpace(t)) == 0 {
		return true
	}
	return t[0] == '#' && len(line)-len(t) <= indent
}

func newline(raw []byte) string {
	if bytes.Contains(raw, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}
