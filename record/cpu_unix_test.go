//go:build unix

package record

import (
	"syscall"
	"time"
)

// cpuTime returns the process's user plus system CPU time, so benchmarks on
// a shared machine can report CPU per operation beside wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
