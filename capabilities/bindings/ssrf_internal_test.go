package bindings

import (
	"net/netip"
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
		if got := blockedReason(netip.MustParseAddr(tc.ip)) != ""; got != tc.blocked {
			t.Errorf("blockedReason(%s) blocked = %v, want %v", tc.ip, got, tc.blocked)
		}
	}
}

func TestGuard_AllowHosts(t *testing.T) {
	g := newGuard(false, []string{"api.internal", "10.0.0.0/8", "192.168.1.7", "[fd00::1]"})
	if !g.hostAllowed("API.internal.") || g.hostAllowed("other.internal") {
		t.Error("host names: want case-insensitive exact match")
	}
	for ip, want := range map[string]bool{"10.9.9.9": true, "192.168.1.7": true, "192.168.1.8": false, "fd00::1": true, "127.0.0.1": false} {
		if got := g.ipAllowed(netip.MustParseAddr(ip)); got != want {
			t.Errorf("ipAllowed(%s) = %v, want %v", ip, got, want)
		}
	}
}
