package testbind_test

import (
	"fmt"

	"github.com/gslbkit/gslb/internal/testbind"
)

// Find reports where named is, or "" when BIND is not installed; Start
// (from a test) skips then, unless GSLBKIT_REQUIRE_BIND=1.
func ExampleFind() {
	path := testbind.Find()
	fmt.Println(path == "" || len(path) > 0)
	// Output: true
}
