//go:build !unix

package replication

// cpuSeconds is 0 where getrusage is missing (the memory test's CPU
// column then reads 0).
func cpuSeconds() float64 { return 0 }
