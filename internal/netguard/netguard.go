package netguard

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

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

// BlockedReason says why ip may not be dialled by default, or "" if it
// may (a public address).
func BlockedReason(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("") // a zoned address is never "contained" in a prefix
	for _, b := range blockedPrefixes {
		if b.prefix.Contains(ip) {
			return b.why
		}
	}
	return ""
}

// DefaultHint ends a BlockedError's message when the Policy sets none.
const DefaultHint = "allow it with AllowPrivate or AllowHosts"

// BlockedError is a connection a Policy refused.
type BlockedError struct {
	Label string // the message's prefix (Policy.Label)
	Host  string // the host name dialled
	IP    string // the address it resolved to
	Why   string // the kind of address ("loopback", ...)
	Hint  string // how to allow it (Policy.Hint)
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("%s: %s resolves to %s, a %s address: refused (%s)",
		cmp.Or(e.Label, "netguard"), e.Host, e.IP, e.Why, cmp.Or(e.Hint, DefaultHint))
}

// Policy decides which addresses may be dialled. The zero value refuses
// every non-public address; a nil *Policy is never dialled through (the
// callers that take one treat nil as "no guard"). A Policy is not
// modified after first use and is then safe for concurrent use.
type Policy struct {
	// AllowPrivate lets every address in.
	AllowPrivate bool
	// AllowHosts lets these in whatever they resolve to: host names
	// (exact, case-insensitive), IP addresses ("192.168.1.7",
	// "[fd00::1]") or CIDR prefixes ("10.0.0.0/8").
	AllowHosts []string
	// Label prefixes a BlockedError's message ["netguard"].
	Label string
	// Hint ends a BlockedError's message: how the operator allows the
	// address [DefaultHint].
	Hint string
}

// allowed is a Policy's AllowHosts, parsed.
type allowed struct {
	names    map[string]bool
	prefixes []netip.Prefix
}

func (p *Policy) parse() allowed {
	a := allowed{names: map[string]bool{}}
	for _, h := range p.AllowHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if pf, err := netip.ParsePrefix(h); err == nil {
			a.prefixes = append(a.prefixes, pf.Masked())
		} else if ip, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
			a.prefixes = append(a.prefixes, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
		} else if h != "" {
			a.names[h] = true
		}
	}
	return a
}

// HostAllowed reports whether a host name is allowed whatever it
// resolves to.
func (p *Policy) HostAllowed(host string) bool {
	return p.AllowPrivate || p.parse().names[strings.ToLower(strings.TrimSuffix(host, "."))]
}

// ipListed reports whether ip is on one of the allowed prefixes.
func (a allowed) ipListed(ip netip.Addr) bool {
	for _, pf := range a.prefixes {
		if pf.Contains(ip.Unmap().WithZone("")) {
			return true
		}
	}
	return false
}

// DialContext dials addr (host:port, the host not yet resolved) and
// checks, in the dialer's Control hook, every address it connects to. It
// fits http.Transport.DialContext.
func (p *Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !p.HostAllowed(host) {
		d.Control = p.control(host)
	}
	return d.DialContext(ctx, network, addr)
}

// control refuses a connection to a blocked address; it runs after name
// resolution, on the address about to be connected.
func (p *Policy) control(host string) func(network, address string, c syscall.RawConn) error {
	a := p.parse()
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%s: unexpected dial address %q: %w", cmp.Or(p.Label, "netguard"), address, err)
		}
		ip := ap.Addr().Unmap()
		if why := BlockedReason(ip); why != "" && !a.ipListed(ip) {
			return &BlockedError{Label: p.Label, Host: host, IP: ip.String(), Why: why, Hint: p.Hint}
		}
		return nil
	}
}
