//go:build !linux

package dnsserver

import "net"

// dontFragment leaves the socket as it is: the option that keeps replies
// whole is set on Linux only.
func dontFragment(*net.UDPConn) error { return nil }
