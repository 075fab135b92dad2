package testdnssec_test

import (
	"fmt"

	"github.com/gslbkit/gslb/internal/testdnssec"
)

func ExampleParseDelv() {
	out := `;; fetch: www.example.test/AAAA
;; validating www.example.test/AAAA: nonexistence proof(s) found
;; resolution failed: ncache nxrrset
; negative response, fully validated
; www.example.test.	30	IN	\-AAAA	;-$NXRRSET
`
	r := testdnssec.ParseDelv(out)
	fmt.Println(r.Status, r.Validated, r.Negative)
	r = testdnssec.ParseDelv(";; fetch: www.broken.test/A\n;; resolution failed: failure\n")
	fmt.Println(r.Status, r.Validated)
	// Output:
	// negative response, fully validated true true
	// resolution failed: failure false
}
