package fielderr_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/gslbkit/gslb/internal/fielderr"
)

func Example() {
	errPolicy := errors.New("probe: invalid policy")
	errMonitor := errors.New("probe: invalid monitor config")
	inner := fielderr.New(errPolicy, "timeout", 10*time.Minute, fielderr.DurationRange(time.Millisecond, 5*time.Minute))
	err := fielderr.In(fielderr.Key("targets", "web"), errMonitor, fielderr.In("policy", errPolicy, inner))
	fmt.Println(err)
	fmt.Println(errors.Is(err, errMonitor))
	// Output:
	// probe: invalid monitor config: targets["web"].policy.timeout = 10m: allowed [1ms, 5m]
	// true
}
