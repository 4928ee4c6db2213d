package redact_test

import (
	"errors"
	"testing"

	"github.com/agentnode/agentnode/internal/redact"
)

func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ws://user:pw@host/?token=t", "ws://***@host/?token=***"},
		{"wss://relay.example:4443/path", "wss://relay.example:4443/path"},
		{"ws://127.0.0.1:1/?token=t&x=1", "ws://127.0.0.1:1/?token=***&x=***"},
		{"ws://onlyuser@host", "ws://***@host"},
		{"https://h/p?secret#frag", "https://h/p?***#***"},
		{"ws://us er:p w@host/%zz?token=t", "ws://***@host/%zz?***"}, // does not parse: by shape
		{"not a url", "not a url"},
		{"", ""},
	} {
		if got := redact.URL(tc.in); got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestText(t *testing.T) {
	err := errors.New(`dial "ws://user:pw@127.0.0.1:1/?token=t": connection refused`)
	got := redact.Text(err.Error())
	want := `dial "ws://***@127.0.0.1:1/?token=***": connection refused`
	if got != want {
		t.Fatalf("Text = %q, want %q", got, want)
	}
	if s := "no url here"; redact.Text(s) != s {
		t.Fatalf("Text changed %q", s)
	}
}

func TestError(t *testing.T) {
	base := errors.New("dial ws://u:p@h/?k=v")
	err := redact.Error(base)
	if got := err.Error(); got != "dial ws://***@h/?k=***" {
		t.Fatalf("Error() = %q", got)
	}
	if !errors.Is(err, base) || redact.Error(nil) != nil {
		t.Fatal("Error does not wrap, or wraps nil")
	}
}
