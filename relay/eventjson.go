package relay

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/nbd-wtf/go-nostr"
)

// Stored events are read straight from their raw LMDB record into the JSON
// of an EVENT frame, appended to one buffer per query (the arena), and the
// nostr.Event handed to filter.Matches and the policies is built from that
// same JSON: its id, pubkey, sig and every string that JSON does not
// escape are views into the arena, not copies. The arena is only ever
// appended to, so the views stay valid and unchanged for as long as
// anything holds them (a growing arena moves on to a new array and leaves
// the old one as it was).

// errRecord is a raw record that is not the layout's (truncated).
var errRecord = errors.New("relay: malformed stored record")

// recordDecoder decodes the records of one query: their JSON goes into
// arena chunks, their events, tag lists and tag items into slabs, so that
// a query allocates a few blocks rather than a few objects per event.
type recordDecoder struct {
	d      jsonDecoder
	events []nostr.Event
	tags   []nostr.Tag
	items  []string
}

// Sizes of a query's blocks: the first ones are small (most queries
// answer a few events), each next one twice the last, up to these.
const (
	arenaChunk = 64 << 10
	eventSlab  = 64
	tagSlab    = 256
	itemSlab   = 512
)

// nextSize is twice last, at least need and first, at most most (unless need is more).
func nextSize(last, need, first, most int) int {
	return max(need, min(max(2*last, first), most))
}

// decode decodes one raw record.
func (rd *recordDecoder) decode(raw []byte) (*nostr.Event, []byte, error) {
	if len(raw) < 138 {
		return nil, nil, errRecord
	}
	// room for the JSON without growing (escapes may still grow it): a
	// new chunk rather than a copy of the old one
	if need := 2*len(raw) + 256; cap(rd.d.buf)-len(rd.d.buf) < need {
		rd.d.buf = make([]byte, 0, nextSize(cap(rd.d.buf), need, 16<<10, arenaChunk))
	}
	if len(rd.events) == cap(rd.events) {
		rd.events = make([]nostr.Event, 0, nextSize(cap(rd.events), 1, 16, eventSlab))
	}
	rd.events = rd.events[:len(rd.events)+1]
	evt := &rd.events[len(rd.events)-1]
	rd.d.raw, rd.d.start, rd.d.slab = raw, len(rd.d.buf), rd
	if err := rd.d.event(evt); err != nil {
		rd.d.buf = rd.d.buf[:rd.d.start]
		return nil, nil, err
	}
	return evt, rd.d.buf[rd.d.start:len(rd.d.buf):len(rd.d.buf)], nil
}

// decoderMark is where a recordDecoder stood before a decode.
type decoderMark struct {
	buf    []byte
	events []nostr.Event
	tags   []nostr.Tag
	items  []string
}

// mark is the decoder's current position, for rollback.
func (rd *recordDecoder) mark() decoderMark {
	return decoderMark{rd.d.buf, rd.events, rd.tags, rd.items}
}

// rollback returns the decoder to m, dropping every event decoded since:
// their memory is reused by the next decode, so nothing may still hold
// them. A query rolls back each candidate that does not match, so that
// its arena holds the answer, not everything it read.
func (rd *recordDecoder) rollback(m decoderMark) {
	rd.d.buf, rd.events, rd.tags, rd.items = m.buf, m.events, m.tags, m.items
}

// tagList returns n fresh tag slots from the slab.
func (rd *recordDecoder) tagList(n int) nostr.Tags {
	if cap(rd.tags)-len(rd.tags) < n {
		rd.tags = make([]nostr.Tag, 0, nextSize(cap(rd.tags), n, 64, tagSlab))
	}
	rd.tags = rd.tags[:len(rd.tags)+n]
	return nostr.Tags(rd.tags[len(rd.tags)-n : len(rd.tags) : len(rd.tags)])
}

// itemList returns room for n tag items from the slab.
func (rd *recordDecoder) itemList(n int) []string {
	if cap(rd.items)-len(rd.items) < n {
		rd.items = make([]string, 0, nextSize(cap(rd.items), n, 128, itemSlab))
	}
	return rd.items[len(rd.items):len(rd.items)]
}

// jsonDecoder walks one raw record.
type jsonDecoder struct {
	raw   []byte
	buf   []byte
	start int
	pos   int // read position in raw
	slab  *recordDecoder
}

func (d *jsonDecoder) event(evt *nostr.Event) error {
	raw := d.raw
	evt.CreatedAt = nostr.Timestamp(binary.BigEndian.Uint32(raw[128:132]))
	evt.Kind = int(binary.BigEndian.Uint16(raw[132:134]))
	d.buf = append(d.buf, `{"kind":`...)
	d.buf = strconv.AppendInt(d.buf, int64(evt.Kind), 10)
	d.buf = append(d.buf, `,"id":"`...)
	evt.ID = d.hex(raw[0:32])
	d.buf = append(d.buf, `","pubkey":"`...)
	evt.PubKey = d.hex(raw[32:64])
	d.buf = append(d.buf, `","created_at":`...)
	d.buf = strconv.AppendInt(d.buf, int64(evt.CreatedAt), 10)
	d.buf = append(d.buf, `,"tags":`...)
	n := int(binary.BigEndian.Uint16(raw[134:136]))
	if 136+n+2 > len(raw) {
		return errRecord
	}
	content := raw[136 : 136+n]
	d.pos = 136 + n
	var err error
	if evt.Tags, err = d.tags(); err != nil {
		return err
	}
	d.buf = append(d.buf, `,"content":`...)
	if evt.Content, err = d.str(content); err != nil {
		return err
	}
	d.buf = append(d.buf, `,"sig":"`...)
	evt.Sig = d.hex(raw[64:128])
	d.buf = append(d.buf, `"}`...)
	return nil
}

// hex appends b in hex and returns a view of it.
func (d *jsonDecoder) hex(b []byte) string {
	at := len(d.buf)
	d.buf = hex.AppendEncode(d.buf, b)
	return d.view(at, len(d.buf))
}

// view is the arena's bytes [from, to) as a string without copying.
func (d *jsonDecoder) view(from, to int) string {
	if from == to {
		return ""
	}
	return unsafe.String(&d.buf[from], to-from)
}

// tags appends the tag list and returns it; all items share one backing array.
func (d *jsonDecoder) tags() (nostr.Tags, error) {
	raw := d.raw
	count := int(binary.BigEndian.Uint16(raw[d.pos : d.pos+2]))
	d.pos += 2
	tags := d.slab.tagList(count)
	items := d.slab.itemList(d.itemCount(count))
	d.buf = append(d.buf, '[')
	for t := range tags {
		if d.pos >= len(raw) {
			return nil, errRecord
		}
		size := int(raw[d.pos])
		d.pos++
		if t > 0 {
			d.buf = append(d.buf, ',')
		}
		d.buf = append(d.buf, '[')
		first := len(items)
		for i := range size {
			if d.pos+2 > len(raw) {
				return nil, errRecord
			}
			n := int(binary.BigEndian.Uint16(raw[d.pos : d.pos+2]))
			if d.pos+2+n+1 > len(raw) {
				return nil, errRecord
			}
			if i > 0 {
				d.buf = append(d.buf, ',')
			}
			s, err := d.str(raw[d.pos+2 : d.pos+2+n])
			if err != nil {
				return nil, err
			}
			items = append(items, s)
			d.pos += 2 + n + 1
		}
		d.buf = append(d.buf, ']')
		tags[t] = nostr.Tag(items[first:len(items):len(items)])
	}
	d.buf = append(d.buf, ']')
	d.slab.items = d.slab.items[:len(d.slab.items)+len(items)]
	return tags, nil
}

// itemCount is the number of tag items of the record's count tags (at
// d.pos), or 0 if the record is short (tags then fails on it).
func (d *jsonDecoder) itemCount(count int) int {
	n, pos := 0, d.pos
	for range count {
		if pos >= len(d.raw) {
			return 0
		}
		size := int(d.raw[pos])
		pos++
		n += size
		for range size {
			if pos+2 > len(d.raw) {
				return 0
			}
			pos += 2 + int(binary.BigEndian.Uint16(d.raw[pos:pos+2])) + 1
		}
	}
	return n
}

// errNotUTF8 is a stored string JSON cannot carry as it is.
var errNotUTF8 = errors.New("relay: stored string is not UTF-8")

// str appends b as a JSON string and returns b as a Go string: a view of
// the arena when JSON needs no escape, else a copy.
func (d *jsonDecoder) str(b []byte) (string, error) {
	d.buf = append(d.buf, '"')
	at := len(d.buf)
	plain := true
	for i := 0; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		d.buf = append(d.buf, b...)
		s := d.view(at, len(d.buf))
		d.buf = append(d.buf, '"')
		return s, nil
	}
	if !utf8.Valid(b) {
		return "", errNotUTF8
	}
	d.buf = appendEscaped(d.buf, b)
	d.buf = append(d.buf, '"')
	if len(d.buf)-1-at == len(b) { // only non-ASCII, nothing escaped
		return d.view(at, len(d.buf)-1), nil
	}
	return string(b), nil
}

// appendEscaped appends UTF-8 b with JSON's mandatory escapes.
func appendEscaped(buf, b []byte) []byte {
	const hexDigits = "0123456789abcdef"
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c == '\n':
			buf = append(buf, '\\', 'n')
		case c == '\r':
			buf = append(buf, '\\', 'r')
		case c == '\t':
			buf = append(buf, '\\', 't')
		case c < 0x20:
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			buf = append(buf, c)
		}
	}
	return buf
}
