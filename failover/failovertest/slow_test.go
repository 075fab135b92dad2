package failovertest_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/failover/failovertest"
	"github.com/gslbkit/gslb/probe"
)

// nearOnly is a latency-aware policy: region a's served gateways whose
// smoothed RTT (failover.Gateway.RTT) is at most limit, or every served
// one when none is that fast.
func nearOnly(app, zone string, limit time.Duration) failover.Decider[failover.Snapshot] {
	return failover.DeciderFunc[failover.Snapshot](func(_ time.Time, s failover.Snapshot) (failover.Decision, error) {
		var fast, served []netip.Addr
		for _, c := range s.Clusters {
			for _, g := range c.Gateways {
				if !g.Health.Served() {
					continue
				}
				served = append(served, g.Addrs...)
				if g.RTT <= limit {
					fast = append(fast, g.Addrs...)
				}
			}
		}
		if len(fast) == 0 {
			fast = served
		}
		return failover.Decision{Desired: failover.AddrSets(zone, "", app, fast, 30*time.Second, failover.RegionWriters("a"))}, nil
	})
}

// slowScenario: a1 turns slow (300 ms) and fast again; a2's round trip
// grows past the probe timeout (1 s), so its probes time out.
//
// Bounds: the monitor smooths latencies with weight 0.2 per probe
// (probe.DefaultMonitorConfig), probes come every 10 s (plus jitter) and
// an RTT change is no state change, so the controller sees it at its next
// reconcile (10 s). Turning slow, 60 then 108 ms: the second slow probe
// crosses 100 ms, within 2 probes + a reconcile < 45 s. After 90 s at
// 300 ms the average is about 260 ms and falls below 100 ms after 5 fast
// probes (260 × 0.8⁵ ≈ 85), within 5 probes + a reconcile < 75 s.
func slowScenario() *failovertest.Scenario {
	cfg := failovertest.DefaultConfig()
	s := failovertest.New(cfg).Region("a").Cluster("a-1", "a").
		Gateway("a-1", "a1", "192.0.2.1").Gateway("a-1", "a2", "192.0.2.2").Gateway("a-1", "a3", "192.0.2.3")
	app := s.AppName()
	s.Policy(nearOnly(app, "example.test.", 100*time.Millisecond))
	s.At(0).Expect("a", app, s.Addrs("a1", "a2", "a3")...)
	s.At(30*time.Second).GatewaySlow(300*time.Millisecond, "a1").ExpectWithin(45*time.Second, "a", app, s.Addrs("a2", "a3")...)
	s.At(2*time.Minute).GatewaySlow(0, "a1").ExpectWithin(75*time.Second, "a", app, s.Addrs("a1", "a2", "a3")...)
	s.At(4*time.Minute).GatewaySlow(2*time.Second, "a2").ExpectWithin(cfg.GatewayBound(), "a", app, s.Addrs("a1", "a3")...)
	return s
}

func TestSlowGatewayReplay(t *testing.T) {
	require.NoError(t, slowScenario().Replay(nil))
}

// TestSlowGatewayRun plays the slow gateway with the whole kit and reads
// the probe statistics the controller's policy is fed from.
func TestSlowGatewayRun(t *testing.T) {
	s := slowScenario()
	s.At(2*time.Minute-time.Second).Do("a1's probe statistics while slow", func(t *testing.T, w *failovertest.World) {
		st, ok := w.ProbeStats("a1")
		require.True(t, ok)
		assert.Equal(t, 300*time.Millisecond, st.LastLatency)
		assert.Greater(t, st.SmoothedLatency, 200*time.Millisecond)
		assert.Less(t, st.SmoothedLatency, 300*time.Millisecond)
		fast, ok := w.ProbeStats("a3")
		require.True(t, ok)
		assert.Zero(t, fast.SmoothedLatency, "an in-memory gateway answers at once")
	})
	s.At(5*time.Minute).Do("a2's probes time out", func(t *testing.T, w *failovertest.World) {
		st, ok := w.ProbeStats("a2")
		require.True(t, ok)
		assert.False(t, st.Served)
		assert.NotZero(t, st.FailuresByKind[probe.KindTimeout])
		_, ok = w.ProbeStats("nope")
		assert.False(t, ok)
	})
	s.Run(t)
}

func TestGatewaySlowRejectsNegative(t *testing.T) {
	s := slowScenario()
	s.At(time.Minute).GatewaySlow(-time.Second, "a1")
	require.ErrorIs(t, s.Replay(nil), failovertest.ErrInvalid)
}
