package bad_test

import "fmt"

// Example uses a helper from another file, so godoc cannot show it whole.
func Example() {
	fmt.Println(helper())
	// Output: help
}
