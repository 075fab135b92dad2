//go:build linux && (amd64 || arm64)

package dnsserver

import "testing"

// UsePortableUDP makes servers started until the test ends serve UDP with
// the portable loop (Go's poller, x/net batches) instead of the raw one.
func UsePortableUDP(t testing.TB) {
	portableUDP = true
	t.Cleanup(func() { portableUDP = false })
}
