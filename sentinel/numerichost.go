package sentinel

import (
	"net/netip"
	"strconv"
	"strings"
)

// parseIP is anetResolve with ANET_IP_ONLY, that is getaddrinfo with
// AI_NUMERICHOST as glibc implements it: an IPv4 address in any form
// inet_aton accepts (1 to 4 parts, each decimal, octal with a leading 0 or
// hexadecimal with 0x; the last part fills the remaining bytes: "127.1",
// "1.2.3", "0x7f.1", "4294967295"), the whole string and nothing else, or an
// IPv6 literal with an optional numeric %scope. The zone is dropped, as
// inet_ntop drops it. Interface names as scopes ("fe80::1%lo", which glibc
// resolves with if_nametoindex) are refused: the core cannot look them up.
func parseIP(s string) (netip.Addr, bool) {
	if a, ok := parseInetAton(s); ok {
		return a, true
	}
	if !strings.Contains(s, ":") {
		return netip.Addr{}, false
	}
	host, zone, hasZone := strings.Cut(s, "%")
	if hasZone {
		if _, err := strconv.ParseUint(zone, 10, 32); err != nil {
			return netip.Addr{}, false
		}
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a, true
}

// parseInetAton is glibc's __inet_aton_exact.
func parseInetAton(s string) (netip.Addr, bool) {
	if s == "" {
		return netip.Addr{}, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := atonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	// Every part but the last is one byte; the last fills the rest.
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	v := last
	for i, p := range vals[:len(vals)-1] {
		if p > 0xff {
			return netip.Addr{}, false
		}
		v |= p << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// atonPart parses one part of an inet_aton address: decimal, octal after a
// leading 0, hexadecimal after 0x/0X (at least one digit).
func atonPart(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, p = 16, p[2:]
		if p == "" {
			return 0, false
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	var v uint64
	for i := 0; i < len(p); i++ {
		c := p[i]
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= uint64(base) {
			return 0, false
		}
		v = v*uint64(base) + d
		if v > 0xffffffff {
			return 0, false
		}
	}
	return v, true
}

// formatIP is inet_ntop: dotted quad for IPv4; for IPv6 RFC 5952's form,
// except that glibc writes an IPv4-compatible address (::a.b.c.d, the zero
// run exactly the first six words) in dotted form too.
func formatIP(a netip.Addr) string {
	a = a.WithZone("")
	if a.Is6() && !a.Is4In6() {
		b := a.As16()
		zero := true
		for _, x := range b[:12] {
			zero = zero && x == 0
		}
		if zero && (b[12] != 0 || b[13] != 0) {
			return "::" + netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}).String()
		}
	}
	return a.String()
}

// canonicalHost is createSentinelAddr's ip: the address as inet_ntop
// writes it when host is numeric, else host itself (a host name, kept for
// the shell to resolve when resolve-hostnames is on).
func canonicalHost(host string) string {
	if a, ok := parseIP(host); ok {
		return formatIP(a)
	}
	return host
}

// NumericHost reports whether host is an address redis-sentinel takes
// without resolving it (parseIP's rules: "127.1", "0x7f.0.0.1", "::1%1"),
// and returns it as redis-sentinel then shows it (inet_ntop's form).
func NumericHost(host string) (string, bool) {
	a, ok := parseIP(host)
	if !ok {
		return "", false
	}
	return formatIP(a), true
}
