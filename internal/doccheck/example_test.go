package doccheck_test

import (
	"fmt"

	"github.com/gslbkit/gslb/internal/doccheck"
)

// Example checks a fixture package whose docs cite names that do not exist.
func Example() {
	set, err := doccheck.Load(".", "./testdata/bad")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range set.Check() {
		fmt.Printf("%s: %s\n", p.Cited, p.Why)
	}
	// Output:
	// [Thing.Missing]: Thing has no field or method Missing
	// [Gone]: no Gone in package bad
	// [time.Nope]: no Nope in time
	// time.Durationn: no Durationn in time
	// Thing.Colour: Thing has no field or method Colour
	// bad.Nothing: no Nothing in github.com/gslbkit/gslb/internal/doccheck/testdata/bad
	// Thing.Cells: shows unexported width
}
