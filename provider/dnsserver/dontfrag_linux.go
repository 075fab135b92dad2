package dnsserver

import (
	"net"
	"syscall"
)

// dontFragment sets the socket's IPv4 and IPv6 path MTU discovery to
// PMTUDISC_PROBE (see truncateToTC's file for why). An IPv4 socket takes
// only the IPv4 option, an IPv6-only one only the IPv6 option; a dual-stack
// socket takes both. It fails only if neither could be set.
func dontFragment(c *net.UDPConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var err4, err6 error
	if err := rc.Control(func(fd uintptr) {
		err4 = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_MTU_DISCOVER, syscall.IP_PMTUDISC_PROBE)
		err6 = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_MTU_DISCOVER, syscall.IPV6_PMTUDISC_PROBE)
	}); err != nil {
		return err
	}
	if err4 != nil && err6 != nil {
		return err4
	}
	return nil
}
