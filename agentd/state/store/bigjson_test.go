package store

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/state/crdt"
)

// marshalBig's splicing gives json.Marshal's bytes: strings with every
// escape class (controls, quotes, HTML, U+2028/9, invalid UTF-8, multibyte)
// in documents and in op envelopes, nested or not.
func TestMarshalBig_MatchesMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "é", "\u2028", "\u2029", "<", ">", "&", "\"", "\\", "\n", "\t", "\x01", "\x7f", "\xff", "\xe2\x80", "😀", "\u0000", " "}
	gen := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for range 20 {
		big := gen(bigString + rng.IntN(1000))
		doc := map[string]any{"title": gen(10), "body": big, "n": json.Number("3"),
			"extra": map[string]any{"blob": gen(bigString), "list": []any{gen(5), gen(bigString)}}}
		want, _ := json.Marshal(doc)
		got, err := marshalDocument(doc)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("document: %v, %d vs %d bytes", err, len(got), len(want))
		}
		if doc["body"] != big {
			t.Fatal("the document was changed")
		}
		child := crdt.Op{Kind: crdt.OpInsert, Text: gen(bigString)}
		e := Envelope{Schema: "s", Doc: "d", Action: ActionOp, Op: crdt.Op{Kind: "put", Key: "k", Child: &child}}
		e2 := Envelope{Schema: "s", Doc: "d", Action: ActionOp, Op: crdt.Op{Kind: crdt.OpInsert, Text: big}}
		for _, env := range []Envelope{e, e2} {
			want, _ := json.Marshal(env)
			got, err := opBody(env)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("envelope: %v, %d vs %d bytes", err, len(got), len(want))
			}
		}
		if child.Text == "" || len(e.Op.Child.Text) < bigString {
			t.Fatal("the op was changed")
		}
		if n := jsonStringLen(big); n != len(appendJSONString(nil, big)) {
			t.Fatalf("jsonStringLen %d", n)
		}
	}
}
