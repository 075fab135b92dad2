//go:build linux && 386

package probe

// The socket system calls the event loop makes. On 386 the syscall package
// reaches sockets only through the multiplexed socketcall(2); Linux 4.3 and
// later also have one call per operation, with these numbers
// (arch/x86/entry/syscalls/syscall_32.tbl), which the loop uses.
const (
	sysSocket     = 359
	sysGetsockopt = 365
	sysSetsockopt = 366
	sysConnect    = 362
)
