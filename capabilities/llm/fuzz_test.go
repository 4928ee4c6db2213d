package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

// Any set of tool names gets valid, distinct wire names that map back.
func FuzzAliases(f *testing.F) {
	f.Add("state.create\nstate_create\nstate-create")
	f.Add("a.b\na_b\na_b_2\na:b")
	f.Add(strings.Repeat("x.", 40) + "\n" + strings.Repeat("x_", 40))
	f.Add("é\n_\n\n")
	f.Fuzz(func(t *testing.T, joined string) {
		names := strings.Split(joined, "\n")
		al := newAliases(names)
		seen := map[string]string{}
		for _, n := range names {
			w := al.wire(n)
			if !validToolName.MatchString(w) {
				t.Fatalf("wire(%q) = %q is not a valid function name", n, w)
			}
			if prev, ok := seen[w]; ok && prev != n {
				t.Fatalf("wire(%q) = wire(%q) = %q", n, prev, w)
			}
			seen[w] = n
			if got := al.name(w); got != n {
				t.Fatalf("name(wire(%q)) = %q", n, got)
			}
		}
	})
}

// decodeResponse never panics on what a server may send.
func FuzzDecodeResponse(f *testing.F) {
	f.Add(`{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"total_tokens":3}}`)
	f.Add(`{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"state_create","arguments":"{}"}}]}}]}`)
	f.Add(`{"choices":[{"message":{"content":[{"type":"text","text":"a"}],"tool_calls":[{"function":{"name":"x","arguments":{"a":1}}}]}}]}`)
	f.Add(`{"choices":[]}`)
	f.Fuzz(func(t *testing.T, body string) {
		var w wireResponse
		if json.Unmarshal([]byte(body), &w) != nil {
			return
		}
		resp, err := decodeResponse(w, newAliases([]string{"state.create"}))
		if err == nil {
			for _, tc := range resp.Message.ToolCalls {
				if tc.ID == "" {
					t.Fatalf("tool call without id: %+v", tc)
				}
			}
		}
	})
}
