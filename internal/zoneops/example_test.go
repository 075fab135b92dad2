package zoneops_test

import (
	"fmt"

	"github.com/gslbkit/gslb/internal/zoneops"
)

func ExampleQuoteTXT() {
	q := zoneops.QuoteTXT(`v=gslb1; say "hi"`)
	fmt.Println(q)
	fmt.Println(zoneops.UnquoteTXT(q))
	// Output:
	// "v=gslb1; say \"hi\""
	// v=gslb1; say "hi"
}
