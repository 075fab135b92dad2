package errclass_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/gslbkit/gslb/internal/errclass"
)

func ExampleOf() {
	throttled := errclass.Mark(errors.New("429 Too Many Requests"), errclass.Throttled)
	fmt.Println(errclass.Of(fmt.Errorf("set records: %w", throttled)))
	fmt.Println(errclass.Of(context.DeadlineExceeded))
	fmt.Println(errclass.Of(errors.New("zone not found")))
	// Output:
	// throttled
	// transient
	// permanent
}
