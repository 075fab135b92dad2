package failovertest_test

import (
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/failover/failovertest"
)

// Example_spillOver defines a policy of its own — prefer region a unless
// fewer than two of its gateways are healthy, then add region b (spillOver,
// below) — and replays a scenario in which region
// a's gateways die one by one: each expectation asserts the new answer
// within the gateway failover bound, in simulated time. A test runs the
// same scenario with the whole kit (probe monitors, heartbeats,
// reconcilers) through s.Run(t); Replay needs no *testing.T.
func Example_spillOver() {
	s := spillScenario()
	err := s.Replay(os.Stdout)
	fmt.Println("all expectations met:", err == nil)
	// Output:
	// at 0s: httpbin.example.test. in a: [192.0.2.1 192.0.2.2 192.0.2.3]
	// at 30s: httpbin.example.test. in a: [192.0.2.2 192.0.2.3] after 20s (bound 31.032s)
	// at 2m0s: httpbin.example.test. in a: [192.0.2.3 198.51.100.1 198.51.100.2] after 20s (bound 31.032s)
	// at 4m0s: httpbin.example.test. in a: [198.51.100.1 198.51.100.2] after 20s (bound 31.032s)
	// at 6m0s: httpbin.example.test. in a: [192.0.2.1 192.0.2.2 192.0.2.3] after 10s (bound 41s)
	// all expectations met: true
}

// spillOver is a user's policy: the app name answers region a's served
// gateways, unless fewer than two of them are served; then region b's
// gateways are added. It is written by region a's controllers, which
// observe a's gateways; b's gateways count while their cluster's global
// beat is fresh (b's controller beats while one of them is served).
func spillOver(app, zone string) failover.Decider[failover.Snapshot] {
	return failover.DeciderFunc[failover.Snapshot](func(_ time.Time, s failover.Snapshot) (failover.Decision, error) {
		var a, b []netip.Addr
		for _, c := range s.Clusters {
			for _, g := range c.Gateways {
				served := g.Health.Served() || !g.Health.Known() && c.Global == failover.Fresh
				switch {
				case !served:
				case c.Region == "a":
					a = append(a, g.Addrs...)
				case c.Region == "b":
					b = append(b, g.Addrs...)
				}
			}
		}
		addrs := a
		if len(a) < 2 {
			addrs = append(addrs, b...)
		}
		// No address at all: AddrSets leaves the name out (keep last).
		return failover.Decision{Desired: failover.AddrSets(zone, "", app, addrs, 30*time.Second, failover.RegionWriters("a"))}, nil
	})
}

// spillScenario: region a's three gateways die one by one, then come back.
func spillScenario() *failovertest.Scenario {
	cfg := failovertest.DefaultConfig()
	s := failovertest.New(cfg).
		Region("a").Region("b").
		Cluster("a-1", "a").Cluster("b-1", "b").
		Gateway("a-1", "a1", "192.0.2.1").Gateway("a-1", "a2", "192.0.2.2").Gateway("a-1", "a3", "192.0.2.3").
		Gateway("b-1", "b1", "198.51.100.1").Gateway("b-1", "b2", "198.51.100.2")
	s.Policy(spillOver(s.AppName(), "example.test."))
	app, bound := s.AppName(), cfg.GatewayBound()
	s.At(0).Expect("a", app, s.Addrs("a1", "a2", "a3")...)
	s.At(30*time.Second).GatewayDown("a1").ExpectWithin(bound, "a", app, s.Addrs("a2", "a3")...)
	s.At(2*time.Minute).GatewayDown("a2").ExpectWithin(bound, "a", app, s.Addrs("a3", "b1", "b2")...)
	s.At(4*time.Minute).GatewayDown("a3").ExpectWithin(bound, "a", app, s.Addrs("b1", "b2")...)
	s.At(6*time.Minute).GatewayUp("a1", "a2", "a3").ExpectWithin(cfg.RecoveryBound(), "a", app, s.Addrs("a1", "a2", "a3")...)
	return s
}
