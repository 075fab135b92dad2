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
// fewer than two of its gateways are healthy, then add every other region
// whose beats report all of its gateways healthy (spillOver, below) — and
// replays a scenario in which region b loses a gateway and region a's
// gateways die one by one: b is skipped while its beats count one of two
// gateways healthy, and c takes the spill; once b's gateway is back, b
// is added too. Each expectation asserts the new answer within the kit's
// bound, in simulated time. A test runs the same scenario with the whole
// kit (probe monitors, heartbeats, reconcilers) through s.Run(t), where
// region a's controller sees b's and c's gateways only through their
// beats; Replay needs no *testing.T.
func Example_spillOver() {
	s := spillScenario()
	err := s.Replay(os.Stdout)
	fmt.Println("all expectations met:", err == nil)
	// Output:
	// at 0s: httpbin.example.test. in a: [192.0.2.1 192.0.2.2 192.0.2.3]
	// at 30s: httpbin.example.test. in a: [192.0.2.2 192.0.2.3] after 20s (bound 31.032s)
	// at 2m0s: httpbin.example.test. in a: [192.0.2.3 203.0.113.1 203.0.113.2] after 20s (bound 31.032s)
	// at 3m0s: httpbin.example.test. in a: [192.0.2.3 198.51.100.1 198.51.100.2 203.0.113.1 203.0.113.2] after 10s (bound 41s)
	// at 4m0s: httpbin.example.test. in a: [198.51.100.1 198.51.100.2 203.0.113.1 203.0.113.2] after 20s (bound 31.032s)
	// at 6m0s: httpbin.example.test. in a: [192.0.2.1 192.0.2.2 192.0.2.3] after 10s (bound 41s)
	// all expectations met: true
}

// spillOver is a user's policy: the app name answers region a's served
// gateways, unless fewer than two of them are served; then the gateways
// of every other region are added whose clusters all have a fresh beat
// reporting every one of their gateways healthy. It is written by region
// a's controllers, which observe a's gateways only: another region's
// gateways are HealthUnknown to them, and what they know of them is the
// count the region's own controllers put in their beats
// (Cluster.Reported), never which gateway is down. So a region with a
// dead gateway is not counted as serving, and no dead address is answered.
func spillOver(app, zone string) failover.Decider[failover.Snapshot] {
	return failover.DeciderFunc[failover.Snapshot](func(_ time.Time, s failover.Snapshot) (failover.Decision, error) {
		var own []netip.Addr
		other := map[string][]netip.Addr{} // region -> its addresses
		whole := map[string]bool{}         // region -> every gateway reported healthy
		for _, c := range s.Clusters {
			if c.Region == "a" {
				for _, g := range c.Gateways {
					if g.Health.Served() {
						own = append(own, g.Addrs...)
					}
				}
				continue
			}
			if _, seen := whole[c.Region]; !seen {
				whole[c.Region] = true
			}
			r := c.Reported
			whole[c.Region] = whole[c.Region] && c.Global == failover.Fresh &&
				r.Known() && r.Healthy == r.Total && r.Total == len(c.Gateways)
			for _, g := range c.Gateways {
				other[c.Region] = append(other[c.Region], g.Addrs...)
			}
		}
		addrs := own
		if len(own) < 2 {
			for _, r := range s.Regions {
				if whole[r.Name] {
					addrs = append(addrs, other[r.Name]...)
				}
			}
		}
		// No address at all: AddrSets leaves the name out (keep last).
		return failover.Decision{Desired: failover.AddrSets(zone, "", app, addrs, 30*time.Second, failover.RegionWriters("a"))}, nil
	})
}

// spillScenario: region b loses gateway b1 while region a's three
// gateways die one by one; b1 comes back; then a's gateways do.
func spillScenario() *failovertest.Scenario {
	cfg := failovertest.DefaultConfig()
	s := failovertest.New(cfg).
		Region("a").Region("b").Region("c").
		Cluster("a-1", "a").Cluster("b-1", "b").Cluster("c-1", "c").
		Gateway("a-1", "a1", "192.0.2.1").Gateway("a-1", "a2", "192.0.2.2").Gateway("a-1", "a3", "192.0.2.3").
		Gateway("b-1", "b1", "198.51.100.1").Gateway("b-1", "b2", "198.51.100.2").
		Gateway("c-1", "c1", "203.0.113.1").Gateway("c-1", "c2", "203.0.113.2")
	s.Policy(spillOver(s.AppName(), "example.test."))
	app, bound := s.AppName(), cfg.GatewayBound()
	s.At(0).Expect("a", app, s.Addrs("a1", "a2", "a3")...)
	s.At(30*time.Second).GatewayDown("a1", "b1").ExpectWithin(bound, "a", app, s.Addrs("a2", "a3")...)
	s.At(2*time.Minute).GatewayDown("a2").ExpectWithin(bound, "a", app, s.Addrs("a3", "c1", "c2")...)
	s.At(3*time.Minute).GatewayUp("b1").ExpectWithin(cfg.RecoveryBound(), "a", app, s.Addrs("a3", "b1", "b2", "c1", "c2")...)
	s.At(4*time.Minute).GatewayDown("a3").ExpectWithin(bound, "a", app, s.Addrs("b1", "b2", "c1", "c2")...)
	s.At(6*time.Minute).GatewayUp("a1", "a2", "a3").ExpectWithin(cfg.RecoveryBound(), "a", app, s.Addrs("a1", "a2", "a3")...)
	return s
}
