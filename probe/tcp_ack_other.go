//go:build !linux

package probe

import "syscall"

// tcpHoldACK is nil outside Linux: connect-only checks complete the
// handshake before they reset the connection.
var tcpHoldACK func(network, address string, c syscall.RawConn) error
