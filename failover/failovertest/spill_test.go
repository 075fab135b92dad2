package failovertest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"net/netip"
	"time"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/failover/failovertest"
	"github.com/gslbkit/gslb/record"
)

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

// TestSpillOverPolicyRun runs the user's policy with the whole kit: a
// probe monitor, heartbeats and reconcilers per controller, in a bubble.
func TestSpillOverPolicyRun(t *testing.T) {
	spillScenario().Run(t)
}

// TestReplayReportsFailures checks that Replay can fail: a wrong
// expectation is reported, and steps it cannot play are refused.
func TestReplayReportsFailures(t *testing.T) {
	s := spillScenario()
	s.At(5*time.Minute).ExpectWithin(time.Second, "a", s.AppName(), s.Addrs("a1")...)
	err := s.Replay(nil)
	require.ErrorIs(t, err, failovertest.ErrExpectation)

	s = spillScenario()
	s.At(time.Minute).ControllerDown("a-1")
	require.ErrorIs(t, s.Replay(nil), failovertest.ErrInvalid)
}

// The reconciler takes the policy's output as it is.
var _ record.Source = failover.DesiredState{}
