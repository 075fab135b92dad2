package dnsname_test

import (
	"fmt"

	"github.com/gslbkit/gslb/internal/dnsname"
)

func ExampleRelative() {
	fmt.Println(dnsname.Join("www", "Example.COM"))
	fmt.Println(dnsname.Relative("api.gslb.example.com.", "example.com"))
	fmt.Println(dnsname.Check("-bad.example.com") != nil)
	// Output:
	// www.example.com.
	// api.gslb true
	// true
}
