package cloudflare_test

import (
	"fmt"

	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/provider/cloudflare"
)

// The token comes from the environment; a 429 answer is throttled and
// carries the wait Cloudflare asked for.
func Example() {
	env := map[string]string{"CLOUDFLARE_API_TOKEN": "token-from-the-environment"}
	cfg := cloudflare.DefaultConfig().FromEnv(func(k string) string { return env[k] })
	if _, err := cloudflare.New(cfg); err != nil {
		fmt.Println(err)
		return
	}
	_, err := cloudflare.New(cloudflare.DefaultConfig())
	fmt.Println(err)

	var throttled error = &cloudflare.APIError{Method: "GET", Path: "/zones", Status: 429,
		Errors: []cloudflare.Message{{Code: 971, Message: "Please wait and consider throttling your request speed"}}}
	fmt.Println(errclass.Of(throttled), throttled)
	// Output:
	// cloudflare: invalid config: apiToken = "": allowed a scoped API token with Zone.DNS:Edit (or set CLOUDFLARE_API_TOKEN)
	// throttled cloudflare: GET /zones: HTTP 429: 971: Please wait and consider throttling your request speed
}
