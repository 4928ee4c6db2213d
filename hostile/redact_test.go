package hostile

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/internal/testkit"
)

// A --peer URL with credentials (ws://user:pw@host/?token=t) used to be
// shown verbatim as a label of agentnode_peer_connected on /metrics, to
// anyone, and in the log. Now both show ws://***@host/?token=***.
func TestPeerURL_credentialsAreRedacted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a loopback port nobody serves
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	host := "127.0.0.1:" + itoa(port)
	t.Setenv("AGENTNODE_PEERS", "ws://user:s3cretpw@"+host+"/?token=t0psecret")
	n := startNodeWith(t, nil)

	var body string
	testkit.WaitFor(t, 30*time.Second, "the peer's metrics", func() bool {
		body = getText(t, "http://"+n.addr+"/metrics")
		return strings.Contains(body, "agentnode_peer_connected")
	})
	want := `ws://***@` + host + `/?token=***`
	if !strings.Contains(body, want) {
		t.Errorf("/metrics does not show the peer as %s:\n%s", want, grepLines(body, "peer"))
	}
	// The first failed dial is logged at warn (the node runs at warn).
	testkit.WaitFor(t, 30*time.Second, "the peer's failed session in the log", func() bool {
		return strings.Contains(n.logs.String(), host)
	})
	for where, text := range map[string]string{"/metrics": body, "the log": n.logs.String()} {
		for _, secret := range []string{"s3cretpw", "t0psecret", "user:"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %q:\n%s", where, secret, grepLines(text, secret))
			}
		}
	}
}

// getText GETs url and returns its body (at most 4 MiB).
func getText(t *testing.T, url string) string {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return string(b)
}

// grepLines returns the lines of text that contain word.
func grepLines(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func itoa(i int) string { return strconv.Itoa(i) }
