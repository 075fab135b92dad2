package provider_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/libdns/libdns"
)

// A provider put in a chain: metered, retried on throttling, rate
// limited. The Faulty wrapper throttles the first call, which Retry
// waits out (1 s by default; here shortened).
func Example() {
	faulty, _ := providertest.NewFaulty(&tiny{}, providertest.FaultConfig{})
	faulty.Inject(providertest.Throttle)

	rc := provider.DefaultRetryConfig()
	rc.ThrottledDelay = 10 * time.Millisecond
	retry, _ := provider.NewRetry(rc)
	limit, _ := provider.NewRateLimit(provider.DefaultRateLimitConfig())
	meter := provider.NewMeter(nil)

	p := provider.Wrap(faulty, meter, retry, limit)
	_, err := p.SetRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.Address{Name: "www", IP: netip.MustParseAddr("192.0.2.1"), TTL: time.Minute},
		libdns.Address{Name: "www", IP: netip.MustParseAddr("192.0.2.2"), TTL: time.Minute},
	})
	fmt.Println("error:", err)

	s := meter.Stats().Method(provider.MethodSetRecords)
	fmt.Println("calls:", s.Calls, "records in:", s.RecordsIn, "errors:", s.Errors)
	fmt.Println("attempts reaching the provider:", faulty.Calls())
	// Output:
	// error: <nil>
	// calls: 1 records in: 2 errors: 0
	// attempts reaching the provider: 2
}
