package llm

import "testing"

// TestEncodeRequest_maxTokensTemperature: a request's maxTokens and
// temperature reach the wire; the configured max_tokens stays a ceiling.
func TestEncodeRequest_maxTokensTemperature(t *testing.T) {
	hot, cool := 0.9, 0.2
	for _, tc := range []struct {
		cfgMax, reqMax, want int
		cfgT, reqT, wantT    *float64
	}{
		{0, 100, 100, nil, &cool, &cool},
		{50, 100, 50, &hot, nil, &hot},
		{500, 100, 100, &hot, &cool, &cool},
		{500, 0, 500, nil, nil, nil},
	} {
		w := encodeRequest(Config{Model: "m", MaxTokens: tc.cfgMax, Temperature: tc.cfgT},
			Request{MaxTokens: tc.reqMax, Temperature: tc.reqT}, newAliases(nil))
		if w.MaxTokens != tc.want || w.Temperature != tc.wantT {
			t.Errorf("config %d/%v, request %d/%v: max_tokens %d temperature %v; want %d %v",
				tc.cfgMax, tc.cfgT, tc.reqMax, tc.reqT, w.MaxTokens, w.Temperature, tc.want, tc.wantT)
		}
	}
}
