// Package hostport splits the target addresses that gslbkit's probers
// accept.
package hostport

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Split splits addr into host and port, applying the default and the
// override ports (defPort "" means a port is required). It accepts
// "host:port", "host", "[v6]:port", "[v6]" and bare IPv6 addresses.
func Split(addr, defPort string, override int) (host, port string, err error) {
	if h, p, e := net.SplitHostPort(addr); e == nil {
		host, port = h, p
	} else if a, e := netip.ParseAddr(addr); e == nil {
		host, port = a.String(), defPort
	} else if strings.HasPrefix(addr, "[") && strings.HasSuffix(addr, "]") {
		host, port = addr[1:len(addr)-1], defPort
	} else if !strings.Contains(addr, ":") {
		host, port = addr, defPort
	} else {
		return "", "", fmt.Errorf("probe: address %q: want host:port, host, [v6]:port or an IP address", addr)
	}
	if host == "" {
		return "", "", fmt.Errorf("probe: address %q: empty host", addr)
	}
	if strings.ContainsAny(host, " /\r\n\t@") {
		return "", "", fmt.Errorf("probe: address %q: bad character in host %q", addr, host)
	}
	if override != 0 {
		return host, strconv.Itoa(override), nil
	}
	if port == "" {
		return "", "", fmt.Errorf("probe: address %q: a port is required (or set port)", addr)
	}
	if n, e := strconv.Atoi(port); e != nil || n < 1 || n > 65535 {
		return "", "", fmt.Errorf("probe: address %q: port %q, want 1–65535", addr, port)
	}
	return host, port, nil
}

// Join returns net.JoinHostPort(host, port): addr itself when it already
// reads so, else a new string. A prober keeps the address it dials for as
// long as it lives, and the caller usually has it already (often as the
// target's ID), so one string serves both.
func Join(addr, host, port string) string {
	if len(addr) == len(host)+1+len(port) && !strings.Contains(host, ":") &&
		addr[:len(host)] == host && addr[len(host)] == ':' && addr[len(host)+1:] == port {
		return addr
	}
	return net.JoinHostPort(host, port)
}
