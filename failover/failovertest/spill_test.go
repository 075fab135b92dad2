package failovertest_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/failover/failovertest"
	"github.com/gslbkit/gslb/record"
)

// The scenario and the policy are in example_spill_test.go, beside
// Example_spillOver, so the documentation shows them whole.

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

// TestSpillOverOldCountingAnswersDeadGateway runs the spill-over scenario
// with the policy the example had before beats carried gateway summaries:
// it counted another region's gateway as serving while its cluster's beat
// was fresh. Region a's controller then answers b's dead gateway b1 — what
// reading b's healthy count from its beats (spillOver) avoids.
func TestSpillOverOldCountingAnswersDeadGateway(t *testing.T) {
	s := failovertest.New(failovertest.DefaultConfig()).
		Region("a").Region("b").Region("c").
		Cluster("a-1", "a").Cluster("b-1", "b").Cluster("c-1", "c").
		Gateway("a-1", "a1", "192.0.2.1").Gateway("a-1", "a2", "192.0.2.2").Gateway("a-1", "a3", "192.0.2.3").
		Gateway("b-1", "b1", "198.51.100.1").Gateway("b-1", "b2", "198.51.100.2").
		Gateway("c-1", "c1", "203.0.113.1").Gateway("c-1", "c2", "203.0.113.2")
	app := s.AppName()
	s.At(30*time.Second).GatewayDown("a1", "b1")
	s.At(2 * time.Minute).GatewayDown("a2")
	s.Policy(failover.DeciderFunc[failover.Snapshot](func(_ time.Time, snap failover.Snapshot) (failover.Decision, error) {
		var a, others []netip.Addr
		for _, c := range snap.Clusters {
			for _, g := range c.Gateways {
				served := g.Health.Served() || !g.Health.Known() && c.Global == failover.Fresh
				switch {
				case !served:
				case c.Region == "a":
					a = append(a, g.Addrs...)
				default:
					others = append(others, g.Addrs...)
				}
			}
		}
		if len(a) < 2 {
			a = append(a, others...)
		}
		return failover.Decision{Desired: failover.AddrSets("example.test.", "", app, a, 30*time.Second, failover.RegionWriters("a"))}, nil
	}))
	s.At(2*time.Minute+failovertest.DefaultConfig().GatewayBound()).Do("b1 is answered while down", func(t *testing.T, w *failovertest.World) {
		assert.Contains(t, w.Resolve("a", app), netip.MustParseAddr("198.51.100.1"))
	})
	s.Run(t)
}
