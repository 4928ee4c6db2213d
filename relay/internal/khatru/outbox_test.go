package khatru

import (
	"encoding/json"
	"testing"
)

// An EVENT frame's subscription id is JSON-escaped: a client's id holding
// quotes, backslashes, control or non-ASCII characters comes back intact
// and cannot break the frame.
func TestEventFramePrefix_escapesTheID(t *testing.T) {
	for _, id := range []string{"sub", `a"b`, `back\slash`, "tab\tnew\nline", "ünï", `"],{"x":1},["`} {
		frame := append(eventFramePrefix(id), `{}]`...)
		var got []json.RawMessage
		if err := json.Unmarshal(frame, &got); err != nil || len(got) != 3 {
			t.Fatalf("id %q: frame %s is not a 3-element array: %v", id, frame, err)
		}
		var back string
		if json.Unmarshal(got[1], &back); back != id {
			t.Errorf("id %q came back as %q", id, back)
		}
	}
}
