package lmdbw

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"

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
