//go:build !unix

package probe

import "time"

// monCPUTime is not measured on this platform.
func monCPUTime() time.Duration { return 0 }
