package schema

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// decodeStd is the oracle: encoding/json with UseNumber, one value only.
func decodeStd(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

var decodeSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0.5e+10`, `1E3`, `true`, `false`, `null`, ` {"a" : [1, 2 ,{"b":null}] } `,
	`{"a":1,"a":2}`, `"\u00e9\ud83d\ude00\n\t\"\\\/"`, "\"caf\xc3\xa9\"", "\"bad \xff utf8\"", `{"k\"ey":"v"}`,
	`[[[]],{}]`, `12345678901234567890`, `{"a":1} x`, `{"a":}`, `[1,]`, `"unterminated`, ``, `nul`, `01`, `{"a":1}{}`,
}

func TestDecodeValid_MatchesEncodingJSON(t *testing.T) {
	inputs := append([]string(nil), decodeSeeds...)
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		b, _ := json.Marshal(randValue(r, 4))
		inputs = append(inputs, string(b))
		if len(b) > 2 { // and a corrupted copy
			c := []byte(string(b))
			c[r.IntN(len(c))] = "{}[]\",:x\\ "[r.IntN(10)]
			inputs = append(inputs, string(c))
		}
	}
	for _, in := range inputs {
		want, wantOK := decodeStd([]byte(in))
		got, ok := DecodeValid([]byte(in))
		if ok != wantOK || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: got %#v %v, want %#v %v", in, got, ok, want, wantOK)
		}
	}
}

func FuzzDecodeValid(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want, wantOK := decodeStd([]byte(in))
		got, ok := DecodeValid([]byte(in))
		if ok != wantOK || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: got %#v %v, want %#v %v", in, got, ok, want, wantOK)
		}
	})
}

func randValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(7); {
	case depth == 0 || k == 0:
		return strings.Repeat(string([]rune("aé\"\\\n€😀 /<")[r.IntN(10)]), r.IntN(4))
	case k == 1:
		return json.Number([]string{"0", "-1", "3.25", "1e-7", "123456789012345678901"}[r.IntN(5)])
	case k == 2:
		return r.IntN(2) == 0
	case k == 3:
		return nil
	case k == 4:
		out := make([]any, r.IntN(4))
		for i := range out {
			out[i] = randValue(r, depth-1)
		}
		return out
	default:
		out := map[string]any{}
		for range r.IntN(4) {
			out[randValue(r, 0).(string)] = randValue(r, depth-1)
		}
		return out
	}
}
