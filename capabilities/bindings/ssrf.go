package bindings

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// The SSRF guard. HTTP bindings take their URLs from capability packages,
// that is from strangers, so a binding must not become a way into the
// node's own network: every connection the HTTP client opens — the first
// request, each redirect, each re-resolution of a name — is checked at
// dial time against the address actually dialled, so DNS rebinding and
// redirects to internal addresses are refused too.

// blockedPrefixes are the non-public ranges refused by default, with the
// reason given.
var blockedPrefixes = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified (this network)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT (RFC 6598)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata lives here)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (RFC 1918)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64 (may reach IPv4 internals)"},
	{netip.MustParsePrefix("fc00::/7"), "private (RFC 4193 unique local; fd00:ec2::254 is a metadata address)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// blockedReason says why ip may not be dialled, or "" if it may.
func blockedReason(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("") // a zoned address is never "contained" in a prefix
	for _, b := range blockedPrefixes {
		if b.prefix.Contains(ip) {
			return b.why
		}
	}
	return ""
}

// BlockedError is a connection the guard refused.
type BlockedError struct {
	Host string // the host name dialled
	IP   string // the address it resolved to
	Why  string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("bindings: %s resolves to %s, a %s address: refused (allow it with AllowPrivate or AllowHosts)", e.Host, e.IP, e.Why)
}

// guard decides which hosts may be dialled.
type guard struct {
	allowAll bool
	names    map[string]bool
	prefixes []netip.Prefix
}

func newGuard(allowPrivate bool, allowHosts []string) *guard {
	g := &guard{allowAll: allowPrivate, names: map[string]bool{}}
	for _, h := range allowHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if p, err := netip.ParsePrefix(h); err == nil {
			g.prefixes = append(g.prefixes, p.Masked())
		} else if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
			g.prefixes = append(g.prefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		} else if h != "" {
			g.names[h] = true
		}
	}
	return g
}

// hostAllowed reports whether a host name is allowed whatever it resolves to.
func (g *guard) hostAllowed(host string) bool {
	return g.allowAll || g.names[strings.ToLower(strings.TrimSuffix(host, "."))]
}

// ipAllowed reports whether a dialled address is on an allowed prefix.
func (g *guard) ipAllowed(ip netip.Addr) bool {
	for _, p := range g.prefixes {
		if p.Contains(ip.Unmap().WithZone("")) {
			return true
		}
	}
	return false
}

// dialContext dials addr (host:port, the host not yet resolved) and
// checks, in the dialer's Control hook, every address it connects to.
func (g *guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !g.hostAllowed(host) {
		d.Control = g.control(host)
	}
	return d.DialContext(ctx, network, addr)
}

// control refuses a connection to a blocked address; it runs after name
// resolution, on the address about to be connected.
func (g *guard) control(host string) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("bindings: unexpected dial address %q: %w", address, err)
		}
		ip := ap.Addr().Unmap()
		if why := blockedReason(ip); why != "" && !g.ipAllowed(ip) {
			return &BlockedError{Host: host, IP: ip.String(), Why: why}
		}
		return nil
	}
}
