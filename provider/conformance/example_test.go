package conformance_test

import "fmt"

// Example lists the rows of the matrix TestMatrix runs: each is a
// provider against its own server, through providertest, libdnstest and
// the reconciler.
func Example() {
	for _, r := range rows() {
		fmt.Println(r.name)
	}
	// Output:
	// memory
	// bind
	// knot
	// pdns
	// route53-moto
}
