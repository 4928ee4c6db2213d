package policies

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientIP is the address of the client behind r. It is r.RemoteAddr's IP
// unless that peer is in trusted (the reverse proxies the node is
// deployed behind): then X-Forwarded-For is read from the right, skipping
// trusted hops, and the first address not trusted is the client; without
// one, X-Real-IP; else the peer itself. A header from an untrusted peer is
// never believed: anyone can write one. ("" when RemoteAddr has no IP.)
//
// khatru.GetIP, by contrast, believes the first public address in
// X-Forwarded-For from any peer: one client spoofing a new header per
// connection gets a new rate-limit bucket each time.
func ClientIP(r *http.Request, trusted []netip.Prefix) string {
	peer, ok := parseIP(r.RemoteAddr)
	if !ok {
		return ""
	}
	if !isTrusted(peer, trusted) {
		return peer.String()
	}
	if ip, ok := fromForwardedFor(r.Header.Values("X-Forwarded-For"), trusted); ok {
		return ip.String()
	}
	if ip, err := netip.ParseAddr(strings.TrimSpace(r.Header.Get("X-Real-IP"))); err == nil {
		return ip.Unmap().String()
	}
	return peer.String()
}

// fromForwardedFor walks the X-Forwarded-For hops from the nearest one
// and returns the first not in trusted. A hop that is not an address
// stops the walk (what lies before it cannot be checked).
func fromForwardedFor(values []string, trusted []netip.Prefix) (netip.Addr, bool) {
	hops := strings.Split(strings.Join(values, ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		ip, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return netip.Addr{}, false
		}
		if ip = ip.Unmap(); !isTrusted(ip, trusted) {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

func isTrusted(ip netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// parseIP is the IP of a host:port (or bare host) address.
func parseIP(addr string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

// ParsePrefixes parses IPs and CIDRs ("10.0.0.1", "10.0.0.0/8",
// "::1") into prefixes, a bare IP as a single-address prefix.
func ParsePrefixes(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, err
			}
			out = append(out, p.Masked())
			continue
		}
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return nil, err
		}
		out = append(out, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
	}
	return out, nil
}
