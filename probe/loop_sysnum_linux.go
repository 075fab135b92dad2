//go:build linux && !386

package probe

import "syscall"

// The socket system calls the event loop makes. On every Linux architecture
// but 386 the syscall package names them.
const (
	sysSocket     = syscall.SYS_SOCKET
	sysConnect    = syscall.SYS_CONNECT
	sysSetsockopt = syscall.SYS_SETSOCKOPT
	sysGetsockopt = syscall.SYS_GETSOCKOPT
)
