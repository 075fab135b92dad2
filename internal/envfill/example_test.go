package envfill_test

import (
	"fmt"

	"github.com/gslbkit/gslb/internal/envfill"
)

func Example() {
	env := map[string]string{"REGION": "  ", "DEFAULT_REGION": "eu-west-1 ", "TOKEN": "from-env"}
	fill := envfill.From(func(k string) string { return env[k] })
	region, token := "", "set-already"
	fill(&region, "REGION", "DEFAULT_REGION")
	fill(&token, "TOKEN")
	fmt.Printf("%q %q\n", region, token)
	// Output:
	// "eu-west-1" "set-already"
}
