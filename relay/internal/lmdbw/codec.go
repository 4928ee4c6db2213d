package lmdbw

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"unsafe"

	"github.com/nbd-wtf/go-nostr"
)

// encodable reports why evt cannot be stored in the binary layout, or nil.
func encodable(evt *nostr.Event) error {
	switch {
	case evt.CreatedAt > math.MaxUint32 || evt.CreatedAt < 0:
		return fmt.Errorf("created_at out of range: %d", evt.CreatedAt)
	case evt.Kind > math.MaxUint16 || evt.Kind < 0:
		return fmt.Errorf("kind out of range: %d", evt.Kind)
	case len(evt.Content) > math.MaxUint16:
		return fmt.Errorf("content is too large: %d bytes", len(evt.Content))
	case len(evt.Tags) > math.MaxUint16:
		return fmt.Errorf("too many tags: %d", len(evt.Tags))
	case len(evt.ID) != 64 || len(evt.PubKey) != 64 || len(evt.Sig) != 128:
		return fmt.Errorf("malformed id, pubkey or sig")
	}
	for _, tag := range evt.Tags {
		if len(tag) > math.MaxUint8 {
			return fmt.Errorf("a tag has too many items: %d", len(tag))
		}
		for _, item := range tag {
			if len(item) > math.MaxUint16 {
				return fmt.Errorf("tag item is too large: %d bytes", len(item))
			}
		}
	}
	return nil
}

// marshal encodes evt as eventstore v0.17.2's "hybrid" binary form:
// id, pubkey, sig (raw bytes), created_at u32, kind u16, content length
// u16 + content, tag count u16, then per tag an item count u8 and per item
// a length u16, the bytes and one zero byte. Call encodable first.
func marshal(evt *nostr.Event) []byte {
	size := 136 + len(evt.Content) + 2
	for _, tag := range evt.Tags {
		size++
		for _, item := range tag {
			size += 3 + len(item)
		}
	}
	buf := make([]byte, 136, size)
	hex.Decode(buf[0:32], []byte(evt.ID))
	hex.Decode(buf[32:64], []byte(evt.PubKey))
	hex.Decode(buf[64:128], []byte(evt.Sig))
	binary.BigEndian.PutUint32(buf[128:132], uint32(evt.CreatedAt))
	binary.BigEndian.PutUint16(buf[132:134], uint16(evt.Kind))
	binary.BigEndian.PutUint16(buf[134:136], uint16(len(evt.Content)))
	buf = append(buf, evt.Content...)
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(evt.Tags)))
	for _, tag := range evt.Tags {
		buf = append(buf, uint8(len(tag)))
		for _, item := range tag {
			buf = binary.BigEndian.AppendUint16(buf, uint16(len(item)))
			buf = append(buf, item...)
			buf = append(buf, 0)
		}
	}
	return buf
}

// unmarshal decodes marshal's form; a truncated record is an error.
func unmarshal(data []byte) (evt *nostr.Event, err error) {
	defer func() {
		if r := recover(); r != nil {
			evt, err = nil, fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	evt = &nostr.Event{
		ID:        hex.EncodeToString(data[0:32]),
		PubKey:    hex.EncodeToString(data[32:64]),
		Sig:       hex.EncodeToString(data[64:128]),
		CreatedAt: nostr.Timestamp(binary.BigEndian.Uint32(data[128:132])),
		Kind:      int(binary.BigEndian.Uint16(data[132:134])),
	}
	n := int(binary.BigEndian.Uint16(data[134:136]))
	evt.Content = string(data[136 : 136+n])
	cur := 136 + n
	evt.Tags = make(nostr.Tags, binary.BigEndian.Uint16(data[cur:cur+2]))
	cur += 2
	for t := range evt.Tags {
		tag := make(nostr.Tag, data[cur])
		cur++
		for i := range tag {
			size := int(binary.BigEndian.Uint16(data[cur : cur+2]))
			tag[i] = string(data[cur+2 : cur+2+size])
			cur += 2 + size + 1
		}
		evt.Tags[t] = tag
	}
	return evt, nil
}

// Viewer decodes raw records into one reusable event whose strings are
// views of the record, copying nothing: for checking candidates
// (filter.Matches, a count) without holding them. The event is valid
// until the next View and only while raw is (during a Visit).
type Viewer struct {
	evt   nostr.Event
	hex   [256]byte
	tags  nostr.Tags
	items []string
}

// View decodes raw into the viewer's event; a truncated record is an error.
func (v *Viewer) View(raw []byte) (evt *nostr.Event, err error) {
	defer func() {
		if r := recover(); r != nil {
			evt, err = nil, fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	hex.Encode(v.hex[0:64], raw[0:32])
	hex.Encode(v.hex[64:128], raw[32:64])
	hex.Encode(v.hex[128:256], raw[64:128])
	e := &v.evt
	e.ID, e.PubKey, e.Sig = view(v.hex[0:64]), view(v.hex[64:128]), view(v.hex[128:256])
	e.CreatedAt = nostr.Timestamp(binary.BigEndian.Uint32(raw[128:132]))
	e.Kind = int(binary.BigEndian.Uint16(raw[132:134]))
	n := int(binary.BigEndian.Uint16(raw[134:136]))
	e.Content = view(raw[136 : 136+n])
	cur := 136 + n
	count := int(binary.BigEndian.Uint16(raw[cur : cur+2]))
	cur += 2
	v.tags, v.items = v.tags[:0], v.items[:0]
	for range count {
		size := int(raw[cur])
		cur++
		first := len(v.items)
		for range size {
			l := int(binary.BigEndian.Uint16(raw[cur : cur+2]))
			v.items = append(v.items, view(raw[cur+2:cur+2+l]))
			cur += 2 + l + 1
		}
		v.tags = append(v.tags, nostr.Tag(v.items[first:len(v.items):len(v.items)]))
	}
	e.Tags = v.tags
	return e, nil
}

// view is b as a string without copying.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
