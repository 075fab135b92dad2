//go:build linux

package probe

import "syscall"

// tcpHoldACK is a net.Dialer Control function for connect-only checks: it
// turns TCP_QUICKACK off on the socket before it connects. The kernel then
// delays the handshake's final ACK (by up to 200 ms) instead of sending it
// with the SYN-ACK's arrival; the prober resets the connection first, so
// the target's listener never completes it. Failing to set the option is
// not an error: the check then completes the handshake.
func tcpHoldACK(_, _ string, c syscall.RawConn) error {
	_ = c.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 0)
	})
	return nil
}
