package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestBlockedReason(t *testing.T) {
	for _, tc := range []struct {
		ip      string
		blocked bool
	}{
		{"127.0.0.1", true}, {"::1", true}, {"::ffff:127.0.0.1", true},
		{"10.1.2.3", true}, {"172.16.0.1", true}, {"172.31.255.255", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"fe80::1", true}, {"fe80::1%eth0", true}, {"fd00:ec2::254", true}, {"fc00::1", true},
		{"100.64.0.1", true}, {"100.100.100.200", true}, {"0.0.0.0", true}, {"::", true},
		{"224.0.0.1", true}, {"ff02::1", true}, {"255.255.255.255", true},
		{"8.8.8.8", false}, {"1.1.1.1", false}, {"172.32.0.1", false}, {"100.128.0.1", false},
		{"2606:4700:4700::1111", false}, {"::ffff:8.8.8.8", false},
	} {
		if got := BlockedReason(netip.MustParseAddr(tc.ip)) != ""; got != tc.blocked {
			t.Errorf("BlockedReason(%s) blocked = %v, want %v", tc.ip, got, tc.blocked)
		}
	}
}

func TestPolicy_AllowHosts(t *testing.T) {
	p := &Policy{AllowHosts: []string{"api.internal", "10.0.0.0/8", "192.168.1.7", "[fd00::1]"}}
	if !p.HostAllowed("API.internal.") || p.HostAllowed("other.internal") {
		t.Error("host names: want case-insensitive exact match")
	}
	a := p.parse()
	for ip, want := range map[string]bool{"10.9.9.9": true, "192.168.1.7": true, "192.168.1.8": false, "fd00::1": true, "127.0.0.1": false} {
		if got := a.ipListed(netip.MustParseAddr(ip)); got != want {
			t.Errorf("ipListed(%s) = %v, want %v", ip, got, want)
		}
	}
}

// A real listener on loopback: the zero Policy refuses it at dial time
// (saying why), AllowPrivate and an AllowHosts entry let it in.
func TestPolicy_DialContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ctx := context.Background()

	_, err = (&Policy{Label: "relayclient", Hint: "allow it with X"}).DialContext(ctx, "tcp", "localhost:"+port)
	var blocked *BlockedError
	if !errors.As(err, &blocked) || blocked.Why != "loopback" {
		t.Fatalf("zero policy: err = %v, want a loopback BlockedError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "relayclient: localhost resolves to") || !strings.Contains(msg, "(allow it with X)") {
		t.Errorf("message = %q", msg)
	}
	for _, p := range []*Policy{{AllowPrivate: true}, {AllowHosts: []string{"127.0.0.0/8", "::1"}}, {AllowHosts: []string{"localhost"}}} {
		c, err := p.DialContext(ctx, "tcp", "localhost:"+port)
		if err != nil {
			t.Errorf("%+v: %v", p, err)
			continue
		}
		c.Close()
	}
}
