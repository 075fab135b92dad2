package backoff_test

import (
	"fmt"
	"time"

	"github.com/gslbkit/gslb/internal/backoff"
)

func ExampleExponential() {
	e := backoff.Exponential{Base: 100 * time.Millisecond, Max: time.Second, Factor: 2}
	var delays []time.Duration
	for attempt := 0; attempt < 6; attempt++ {
		delays = append(delays, e.Delay(attempt, nil))
	}
	fmt.Println(delays)
	fmt.Println(backoff.Doubling(10*time.Second, 6, 300*time.Second))
	// Output:
	// [100ms 200ms 400ms 800ms 1s 1s]
	// 5m0s
}
