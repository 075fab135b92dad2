package failovertest_test

import (
	"testing"
	"time"

	"github.com/gslbkit/gslb/failover/failovertest"
)

// TestScenario1AllHealthy: every region is healthy; each region's clients
// get their own region's gateways through app → global → regional, and
// the failover name holds every gateway.
func TestScenario1AllHealthy(t *testing.T) {
	s := twoRegions(failovertest.DefaultConfig())
	app := s.AppName()
	eu, us := s.RegionAddrs("eu"), s.RegionAddrs("us")
	s.At(0).
		Expect("eu", app, eu...).
		Expect("us", app, us...).
		Expect("eu", s.FailoverName(), cat(eu, us)...).
		Expect("us", s.FailoverName(), cat(eu, us)...)
	s.At(5 * time.Minute).
		Expect("eu", app, eu...).
		Expect("us", app, us...)
	s.Run(t)
}

// TestScenario2PartialFailure: one gateway of eu fails; it leaves eu's
// regional record (and the failover record) within the gateway bound,
// the other stays; us is untouched; the gateway comes back within the
// recovery bound.
func TestScenario2PartialFailure(t *testing.T) {
	s := twoRegions(failovertest.DefaultConfig())
	cfg := s.Config()
	app := s.AppName()
	eu, us := s.RegionAddrs("eu"), s.RegionAddrs("us")
	s.At(30*time.Second).GatewayDown("eu-a").
		ExpectWithin(cfg.GatewayBound(), "eu", app, s.Addrs("eu-b")...).
		ExpectWithin(cfg.GatewayBound(), "us", s.FailoverName(), cat(s.Addrs("eu-b"), us)...)
	s.At(2*time.Minute).
		Expect("eu", app, s.Addrs("eu-b")...).
		Expect("us", app, us...)
	s.At(3*time.Minute).GatewayUp("eu-a").
		ExpectWithin(cfg.RecoveryBound(), "eu", app, eu...).
		ExpectWithin(cfg.RecoveryBound(), "eu", s.FailoverName(), cat(eu, us)...)
	s.Run(t)
}
