package failovertest_test

import (
	"fmt"
	"time"

	"github.com/gslbkit/gslb/failover/failovertest"
)

// Example declares the reference document's third scenario — a region
// lost and recovered — and prints its names, topology and timeline. In a
// test, s.Run(t) plays it in virtual time and checks the expectations.
func Example() {
	cfg := failovertest.DefaultConfig()
	s := failovertest.New(cfg).
		Region("eu").Region("us").
		Cluster("eu-1", "eu").Cluster("us-1", "us").
		Gateway("eu-1", "eu-a", "192.0.2.1", "2001:db8::1").
		Gateway("us-1", "us-a", "198.51.100.1", "2001:db8:1::1")
	s.At(30*time.Second).RegionDown("eu").
		ExpectWithin(cfg.ControllerBound(), "eu", s.AppName(), s.RegionAddrs("us")...)
	s.At(5*time.Minute).RegionUp("eu").
		ExpectWithin(cfg.RecoveryBound(), "eu", s.AppName(), s.RegionAddrs("eu")...)
	fmt.Print(s)
	fmt.Println("gateway bound:", cfg.GatewayBound())
	fmt.Println("controller bound:", cfg.ControllerBound())
	// Output:
	// app httpbin.example.test. -> edge-internal.global.example.test.
	// global edge-internal.global.example.test. -> edge-internal.local.example.test. (or global-edge-internal.global.example.test.)
	// region eu: private zone local.example.test.
	//   cluster eu-1
	//     gateway eu-a [192.0.2.1 2001:db8::1]
	// region us: private zone local.example.test.
	//   cluster us-1
	//     gateway us-a [198.51.100.1 2001:db8:1::1]
	// at 30s: region down eu
	// at 30s: expect httpbin.example.test. in eu within 55s: [198.51.100.1 2001:db8:1::1]
	// at 1m25s: deadline of httpbin.example.test. in eu from 30s
	// at 5m0s: region up eu
	// at 5m0s: expect httpbin.example.test. in eu within 41s: [192.0.2.1 2001:db8::1]
	// at 5m41s: deadline of httpbin.example.test. in eu from 5m0s
	// gateway bound: 31.032s
	// controller bound: 55s
}
