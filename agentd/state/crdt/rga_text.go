package crdt

import (
	"strings"
	"unicode/utf8"
	"unsafe"
)

// RGAText is collaborative plain text (rga_text): an RGA of Unicode code
// points with run-length spans and a B+tree position index. Positions and
// lengths count runes.
//
// Ops: {kind:"insert", text, ref: origin unit or zero for the start} where
// the text's runes get ids (id.replica, id.counter+i); {kind:"delete", ref:
// first unit, len}, deleting units ref.counter..ref.counter+len-1 of
// ref.replica. An insert whose origin, or a delete whose target, has not
// arrived is buffered until it does.
type RGAText struct {
	rga
}

// NewRGAText returns an empty text.
func NewRGAText() *RGAText { return &RGAText{rga: newRGA(false)} }

// Type returns "rga_text".
func (t *RGAText) Type() string { return TypeRGAText }

// Apply applies an insert or delete op.
func (t *RGAText) Apply(op Op) error {
	if op.Kind == OpInsert && !utf8.ValidString(op.Text) {
		return invalid(&op, "text is not UTF-8")
	}
	return t.apply(&op, op.Text, utf8.RuneCountInString(op.Text))
}

// Insert inserts text before rune position pos (clamped to [0, Len]) and
// returns the op. Invalid UTF-8 is replaced by U+FFFD. It panics if the
// text has no clock (see Bind).
func (t *RGAText) Insert(pos int, text string) []Op {
	text = strings.ToValidUTF8(text, "\uFFFD")
	n := utf8.RuneCountInString(text)
	if n == 0 {
		return nil
	}
	off := len(t.arena)
	op, err := t.localInsert(pos, text, n)
	if err != nil {
		panic(err)
	}
	// The op's text shares the arena's copy (append-only, so it never
	// changes): the caller's string is not kept alive by the op.
	op.Text = unsafe.String(&t.arena[off], len(text))
	return []Op{op}
}

// Delete deletes n runes from position pos (both clamped to the text) and
// returns the ops. It panics if the text has no clock (see Bind).
func (t *RGAText) Delete(pos, n int) []Op {
	ops, err := t.localDelete(pos, n)
	if err != nil {
		panic(err)
	}
	return ops
}

// String returns the text.
//
// When the visible text is one run of the arena (a text inserted at once
// and not edited since, or edited only at its ends), the string shares the
// arena's bytes: the arena is append-only, so they never change. Otherwise
// it is built in one allocation of the final size.
func (t *RGAText) String() string {
	start, end, total, contiguous := 0, 0, 0, true
	for l := t.first; l != nil; l = l.next {
		for i := range l.spans {
			s := &l.spans[i]
			if s.del || s.blen == 0 {
				continue
			}
			if total == 0 {
				start = int(s.off)
			} else if int(s.off) != end {
				contiguous = false
			}
			end = int(s.off + s.blen)
			total += int(s.blen)
		}
	}
	switch {
	case total == 0:
		return ""
	case contiguous:
		return unsafe.String(&t.arena[start], total)
	}
	var b strings.Builder
	b.Grow(total)
	t.visibleContent(func(p []byte) { b.Write(p) })
	return b.String()
}

// Value returns the text (string).
func (t *RGAText) Value() any { return t.String() }

// Merge folds other's state (including its buffered ops) into t.
func (t *RGAText) Merge(other *RGAText) { t.merge(&other.rga) }
