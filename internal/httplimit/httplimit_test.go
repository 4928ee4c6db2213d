package httplimit_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/internal/httplimit"
)

// echoLen answers 200 with the body's length, or 413 when reading it fails
// with the bound's error (what every endpoint behind Body does).
var echoLen = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if httplimit.TooLarge(err) {
		httplimit.TooLargeAnswer(w, 10)
		return
	}
	io.WriteString(w, strings.Repeat("x", len(b)))
})

// chunked hides the length so the client sends the body chunked.
type chunked struct{ io.Reader }

func TestBodyAndBuffer(t *testing.T) {
	for name, h := range map[string]http.Handler{"Body": httplimit.Body(10, echoLen), "Buffer": httplimit.Buffer(10, echoLen)} {
		srv := httptest.NewServer(h)
		for _, tc := range []struct {
			name string
			body io.Reader
			want int
		}{
			{"fits", strings.NewReader("0123456789"), http.StatusOK},
			{"declared too large", strings.NewReader("0123456789a"), http.StatusRequestEntityTooLarge},
			{"chunked fits", chunked{strings.NewReader("0123456789")}, http.StatusOK},
			{"chunked too large", chunked{strings.NewReader(strings.Repeat("a", 1000))}, http.StatusRequestEntityTooLarge},
		} {
			resp, err := http.Post(srv.URL, "text/plain", tc.body)
			if err != nil {
				t.Fatalf("%s %s: %v", name, tc.name, err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s %s: status %d, want %d", name, tc.name, resp.StatusCode, tc.want)
			}
		}
		srv.Close()
	}
}
