package testproc_test

import (
	"fmt"

	"github.com/gslbkit/gslb/internal/testproc"
)

func Example() {
	port, err := testproc.FreePort()
	fmt.Println(err == nil && port > 0)
	var log testproc.Buffer
	fmt.Fprint(&log, "named ", "started")
	fmt.Println(log.String())
	// Output:
	// true
	// named started
}
