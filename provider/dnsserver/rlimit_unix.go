//go:build unix

package dnsserver

import "syscall"

// fileLimit returns the soft limit on open descriptors (which Go raises to
// the hard limit at start on Linux and the BSDs).
func fileLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	return uint64(r.Cur), true
}
