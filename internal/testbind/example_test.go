package testbind_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gslbkit/gslb/internal/testbind"
)

// Find reports where named is, or "" when BIND is not installed; Start
// (from a test) skips then, unless GSLBKIT_REQUIRE_BIND=1. A path it
// returns names an existing, executable file.
func ExampleFind() {
	path := testbind.Find()
	ok := path == ""
	if path != "" {
		st, err := os.Stat(path)
		ok = err == nil && !st.IsDir() && st.Mode()&0o111 != 0 && filepath.Base(path) == "named"
	}
	fmt.Println(ok)
	// Output: true
}
