package lmdbw

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/nbd-wtf/go-nostr"
)

// indexKey is one index entry of an event: its value is the event's serial.
type indexKey struct {
	dbi lmdb.DBI
	key []byte
}

// indexKeys lists every index entry eventstore v0.17.2 writes for evt
// (lmdb/helpers.go getIndexKeysForEvent), in the same order.
func (w *Writer) indexKeys(evt *nostr.Event) []indexKey {
	d := &w.dbis
	pk8 := hex8(evt.PubKey)
	ts := uint32(evt.CreatedAt)
	keys := []indexKey{
		{d.id, hex8(evt.ID)},
		{d.pubkey, binary.BigEndian.AppendUint32(clone(pk8), ts)},
		{d.kind, binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, uint16(evt.Kind)), ts)},
		{d.pubkeyKind, pubkeyKindKey(pk8, evt.Kind, ts)},
	}
	for i, tag := range evt.Tags {
		if !indexableTag(tag) || firstOf(evt.Tags, tag) != i {
			continue
		}
		dbi, prefix := w.tagPrefix(tag[0], tag[1])
		keys = append(keys, indexKey{dbi, binary.BigEndian.AppendUint32(prefix, ts)})
		if dbi == d.tag32 && tag[0] == "p" {
			keys = append(keys, indexKey{d.ptagKind, pubkeyKindKey(hex8(tag[1]), evt.Kind, ts)})
		}
	}
	keys = append(keys, indexKey{d.createdAt, binary.BigEndian.AppendUint32(nil, ts)})
	return keys
}

// tagPrefix is the index and key prefix (before created_at) of a tag
// value (lmdb/helpers.go getTagIndexPrefix): 32-byte hex values by their
// first 8 bytes in tag32, "kind:pubkey:d" values in tagaddr, anything else
// by its md5 in tag; each prefixed with the tag letter.
func (w *Writer) tagPrefix(name, value string) (lmdb.DBI, []byte) {
	letter := name[0]
	if len(value) == 64 {
		k := make([]byte, 1+8)
		if _, err := hex.Decode(k[1:], []byte(value[:16])); err == nil {
			k[0] = letter
			return w.dbis.tag32, k
		}
	}
	if spl := strings.Split(value, ":"); len(spl) == 3 && len(spl[1]) == 64 {
		k := make([]byte, 1+2+8+30)
		// The pinned layout decodes the value's first 16 characters (which
		// begin with the kind and a colon, so this practically always fails
		// and the value goes to the md5 index): kept as it is.
		if _, err := hex.Decode(k[3:11], []byte(value[:16])); err == nil {
			if kind, err := strconv.ParseUint(spl[0], 10, 16); err == nil {
				k[0], k[1], k[2] = letter, byte(kind>>8), byte(kind)
				n := copy(k[11:], spl[2])
				return w.dbis.tagAddr, k[:11+n]
			}
		}
	}
	sum := md5.Sum([]byte(value))
	return w.dbis.tag, append([]byte{letter}, sum[:]...)
}

// indexableTag reports whether the layout indexes tag.
func indexableTag(tag nostr.Tag) bool {
	return len(tag) >= 2 && len(tag[0]) == 1 && len(tag[1]) > 0 && len(tag[1]) <= 100
}

// firstOf is the index of the first tag with tag's name and value.
func firstOf(tags nostr.Tags, tag nostr.Tag) int {
	for i, t := range tags {
		if len(t) >= 2 && t[0] == tag[0] && t[1] == tag[1] {
			return i
		}
	}
	return -1
}

func pubkeyKindKey(pk8 []byte, kind int, ts uint32) []byte {
	k := binary.BigEndian.AppendUint16(clone(pk8), uint16(kind))
	return binary.BigEndian.AppendUint32(k, ts)
}

// hex8 decodes the first 8 bytes of a hex string (zeros where it is not hex,
// as the layout's hex.Decode into a zeroed buffer leaves them).
func hex8(s string) []byte {
	k := make([]byte, 8)
	if len(s) >= 16 {
		hex.Decode(k, []byte(s[:16]))
	}
	return k
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }
