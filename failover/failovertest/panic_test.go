package failovertest_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/failover/failovertest"
)

// TestPanicThresholdRegionMovesOn: region us has four gateways, which
// fail one after another. With Envoy's panic threshold of 50 % the
// regional answer shrinks to three, then two (half the region), and once
// fewer than half are served the region is treated as failed: its clients
// move on to eu at once, instead of crowding onto the last survivor (or
// being held on dead gateways until the beats go stale). Once us stops
// beating, the global name points at the failover name: the same answer.
// When the gateways return, the region answers its own again.
func TestPanicThresholdRegionMovesOn(t *testing.T) {
	cfg := failovertest.DefaultConfig()
	cfg.Topology.PanicThreshold = 50
	s := failovertest.New(cfg).
		Region("us").Region("eu").
		Cluster("us-1", "us").Cluster("eu-1", "eu").
		Gateway("us-1", "us-a", "192.0.2.1").Gateway("us-1", "us-b", "192.0.2.2").
		Gateway("us-1", "us-c", "192.0.2.3").Gateway("us-1", "us-d", "192.0.2.4").
		Gateway("eu-1", "eu-a", "198.51.100.1").Gateway("eu-1", "eu-b", "198.51.100.2")
	app, bound, eu := s.AppName(), cfg.GatewayBound(), s.RegionAddrs("eu")
	s.At(0).Expect("us", app, s.RegionAddrs("us")...)
	s.At(1*time.Minute).GatewayDown("us-a").ExpectWithin(bound, "us", app, s.Addrs("us-b", "us-c", "us-d")...)
	s.At(2*time.Minute).GatewayDown("us-b").ExpectWithin(bound, "us", app, s.Addrs("us-c", "us-d")...)
	s.At(3*time.Minute).GatewayDown("us-c").ExpectWithin(bound, "us", app, eu...)
	s.At(4*time.Minute).GatewayDown("us-d").ExpectWithin(bound, "us", app, eu...)
	s.At(6*time.Minute).Expect("us", app, eu...).
		Do("global name fails over", func(t *testing.T, w *failovertest.World) {
			if got := w.Chain("us", app); len(got) < 3 || got[2] != s.FailoverName() {
				t.Errorf("chain %v: want the global name on the failover name", got)
			}
		})
	s.At(7*time.Minute).GatewayUp("us-a", "us-b", "us-c", "us-d").
		ExpectWithin(cfg.RecoveryBound(), "us", app, s.RegionAddrs("us")...)
	// Never one survivor alone: from the third failure on, us clients are in eu.
	s.Always("no squeeze onto one us gateway", func(w *failovertest.World) error {
		if got := w.Resolve("us", app); len(got) == 1 {
			return errSqueezed(got)
		}
		return nil
	})
	s.Run(t)
}

type errSqueezed []netip.Addr

func (e errSqueezed) Error() string { return "answer squeezed onto one gateway" }
