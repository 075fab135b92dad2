package rfc2136_test

import (
	"fmt"

	"github.com/gslbkit/gslb/provider/rfc2136"
)

// A configuration usually comes from the environment; Validate names what
// is missing without printing the secret.
func Example() {
	env := map[string]string{
		"GSLB_RFC2136_KEY_NAME": "gslb-key",
		"GSLB_RFC2136_SECRET":   "c2VjcmV0",
	}
	cfg := rfc2136.DefaultConfig().FromEnv(func(k string) string { return env[k] })
	_, err := rfc2136.New(cfg)
	fmt.Println(err)

	cfg.Server = "127.0.0.1:5353"
	p, err := rfc2136.New(cfg)
	fmt.Println(err, p.Config().KeyAlg)
	// Output:
	// rfc2136: invalid config: server = "": allowed "host:port" (or set GSLB_RFC2136_SERVER)
	// <nil> hmac-sha256
}
