//go:build !(linux && (amd64 || arm64))

package dnsserver

import "net"

// serveUDPConn serves conn with the portable batched loop until stop is
// closed.
func (s *Server) serveUDPConn(conn *net.UDPConn, stop <-chan struct{}) {
	s.serveUDPPortable(conn, stop)
}
