//go:build !unix

package record

import "time"

// cpuTime is unavailable here; benchmarks report 0.
func cpuTime() time.Duration { return 0 }
