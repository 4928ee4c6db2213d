package events_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// testTime is the created_at of every signed test event.
const testTime nostr.Timestamp = 1739400000

// hexID returns a deterministic 64-hex id for n.
func hexID(n int) string { return fmt.Sprintf("%064x", n) }

// signed signs a copy of tmpl at testTime and returns it.
func signed(t testing.TB, sk string, tmpl nostr.Event) *nostr.Event {
	t.Helper()
	tmpl.CreatedAt = testTime
	if err := tmpl.Sign(sk); err != nil {
		t.Fatal(err)
	}
	if ok, err := tmpl.CheckSignature(); !ok || err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
	return &tmpl
}

// event builds an unsigned event from a kind, tags and content.
func event(kind int, content string, tags ...nostr.Tag) *nostr.Event {
	return &nostr.Event{Kind: kind, Tags: nostr.Tags(tags), Content: content, CreatedAt: testTime}
}

// bech32Encode encodes data (8-bit bytes) with prefix hrp. Tests use it to
// build NIP-19 strings go-nostr would never produce (malformed TLVs).
func bech32Encode(hrp string, data []byte) string {
	const charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	values := convert8to5(data)
	sum := bech32Checksum(hrp, values)
	var b strings.Builder
	b.WriteString(hrp + "1")
	for _, v := range append(values, sum...) {
		b.WriteByte(charset[v])
	}
	return b.String()
}

func convert8to5(data []byte) []byte {
	var out []byte
	acc, bits := uint32(0), 0
	for _, d := range data {
		acc, bits = acc<<8|uint32(d), bits+8
		for bits >= 5 {
			bits -= 5
			out = append(out, byte(acc>>bits)&31)
		}
	}
	if bits > 0 {
		out = append(out, byte(acc<<(5-bits))&31)
	}
	return out
}

func bech32Checksum(hrp string, values []byte) []byte {
	var in []byte
	for i := 0; i < len(hrp); i++ {
		in = append(in, hrp[i]>>5)
	}
	in = append(in, 0)
	for i := 0; i < len(hrp); i++ {
		in = append(in, hrp[i]&31)
	}
	in = append(append(in, values...), 0, 0, 0, 0, 0, 0)
	mod := bech32Polymod(in) ^ 1
	sum := make([]byte, 6)
	for i := range sum {
		sum[i] = byte(mod>>(5*(5-i))) & 31
	}
	return sum
}

func bech32Polymod(values []byte) uint32 {
	gen := []uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range gen {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}
