package failovertest_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/failover/failovertest"
	"github.com/gslbkit/gslb/provider/memory"
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
		Expect("us", s.FailoverName(), cat(eu, us)...).
		Do("the CNAME chain", func(t *testing.T, w *failovertest.World) {
			assert.Equal(t, []string{app, s.GlobalName(), s.RegionalName()}, w.Chain("eu", app))
		})
	s.At(5*time.Minute).
		Expect("eu", app, eu...).
		Expect("us", app, us...)
	s.Run(t)
}

// TestScenario2PartialFailure: one gateway of eu fails; it leaves eu's
// regional record (and the failover record) within the gateway bound,
// the other stays; us is untouched; the gateway comes back within the
// recovery bound.
func TestScenario2PartialFailure(t *testing.T) {
	s := neverEmpty(twoRegions(failovertest.DefaultConfig()), "eu", "us")
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
	s.At(5*time.Minute).Do("measured", func(t *testing.T, w *failovertest.World) {
		d, ok := w.Measured("eu", app, 30*time.Second)
		assert.True(t, ok)
		assert.LessOrEqual(t, d, cfg.GatewayBound())
		assert.Positive(t, d, "the answer changed after the failure, not before")
	})
	s.Run(t)
}

// TestScenario3RegionFailure: a whole region fails — by its gateways, by
// its controllers, or lost whole — and every client, the failed region's
// included, is sent to the other region's gateways through the failover
// name; on recovery the global name points at the regional name again.
func TestScenario3RegionFailure(t *testing.T) {
	cfg := failovertest.DefaultConfig()
	cases := []struct {
		name    string
		fail    func(m failovertest.Moment)
		recover func(m failovertest.Moment)
		bound   time.Duration
		// heldEU: eu's regional record keeps some of its last addresses
		// (nobody may empty it) while eu is down.
		heldEU bool
	}{
		{
			name:    "gateways",
			fail:    func(m failovertest.Moment) { m.GatewayDown("eu-a", "eu-b") },
			recover: func(m failovertest.Moment) { m.GatewayUp("eu-a", "eu-b") },
			bound:   cfg.RegionGatewaysBound(),
			heldEU:  true,
		},
		{
			name:    "controllers",
			fail:    func(m failovertest.Moment) { m.ControllerDown("eu-1") },
			recover: func(m failovertest.Moment) { m.ControllerUp("eu-1") },
			bound:   cfg.ControllerBound(),
		},
		{
			name:    "region",
			fail:    func(m failovertest.Moment) { m.RegionDown("eu") },
			recover: func(m failovertest.Moment) { m.RegionUp("eu") },
			bound:   cfg.ControllerBound(),
			heldEU:  true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := neverEmpty(twoRegions(cfg), "eu", "us")
			app := s.AppName()
			eu, us := s.RegionAddrs("eu"), s.RegionAddrs("us")
			tc.fail(s.At(30 * time.Second))
			s.At(30*time.Second).
				ExpectWithin(tc.bound, "eu", app, us...).
				ExpectWithin(tc.bound, "us", app, us...)
			m := s.At(5*time.Minute).
				Expect("eu", app, us...).
				Expect("us", app, us...).
				Do("the CNAME chain", func(t *testing.T, w *failovertest.World) {
					assert.Equal(t, []string{app, s.GlobalName(), s.FailoverName()}, w.Chain("eu", app))
				})
			if tc.heldEU {
				// The gateways leave one by one as the probes see them
				// fail; the last one stays (never empty).
				m.Do("eu's regional record held", func(t *testing.T, w *failovertest.World) {
					assertHeld(t, w.Resolve("eu", s.RegionalName()), eu)
				})
			}
			tc.recover(s.At(6 * time.Minute))
			s.At(6*time.Minute).
				ExpectWithin(cfg.RecoveryBound(), "eu", app, eu...).
				ExpectWithin(cfg.RecoveryBound(), "us", app, us...).
				ExpectWithin(cfg.RecoveryBound(), "us", s.FailoverName(), cat(eu, us)...)
			s.At(10*time.Minute).
				Expect("eu", app, eu...).
				Expect("us", app, us...)
			s.Run(t)
		})
	}
}

// TestFastTimings: the embedded zone's timings (beats every 2 s, fresh for
// 8 s, probes every 2 s) fail a region over within seconds; Trace logs
// every change of what a controller writes.
func TestFastTimings(t *testing.T) {
	cfg := failovertest.FastConfig()
	cfg.Trace = true
	s := twoRegions(cfg)
	app := s.AppName()
	eu := s.RegionAddrs("eu")
	s.At(10*time.Second).GatewayDown("us-b").
		ExpectWithin(cfg.GatewayBound(), "us", app, s.Addrs("us-a")...)
	s.At(30*time.Second).ControllerDown("eu-1").
		ExpectWithin(cfg.ControllerBound(), "eu", app, s.Addrs("us-a")...)
	s.At(time.Minute).ControllerUp("eu-1").
		ExpectWithin(cfg.RecoveryBound(), "eu", app, eu...).
		ExpectWithin(cfg.RecoveryBound(), "eu", s.FailoverName(), cat(eu, s.Addrs("us-a"))...)
	s.At(2*time.Minute).Expect("us", app, s.Addrs("us-a")...).Expect("eu", app, eu...)
	s.Run(t)
}

// TestAddressFamilies: eu has an IPv4-only and an IPv6-only gateway. When
// the IPv6 one fails, eu's regional record keeps its A set and withdraws
// its AAAA set (the name still answers); when it returns, AAAA is back.
// A geo answer hook on the failover name, installed through World.Zone,
// answers each client with its nearest region's gateways.
func TestAddressFamilies(t *testing.T) {
	cfg := failovertest.DefaultConfig()
	s := failovertest.New(cfg).
		Region("eu").Region("us").
		Cluster("eu-1", "eu").Cluster("us-1", "us").
		Gateway("eu-1", "eu-v4", "192.0.2.1").
		Gateway("eu-1", "eu-v6", "2001:db8:e::1").
		Gateway("us-1", "us-a", "198.51.100.1", "2001:db8:a::1")
	app := s.AppName()
	s.At(0).Expect("eu", app, "192.0.2.1", "2001:db8:e::1")
	s.At(30*time.Second).GatewayDown("eu-v6").
		ExpectWithin(cfg.GatewayBound(), "eu", app, "192.0.2.1")
	s.At(3*time.Minute).GatewayUp("eu-v6").
		ExpectWithin(cfg.RecoveryBound(), "eu", app, "192.0.2.1", "2001:db8:e::1")
	s.At(5*time.Minute).Do("geo hook", func(t *testing.T, w *failovertest.World) {
		loc, err := failover.NewLocator(failover.GeoMap{
			Prefixes: map[netip.Prefix]string{
				netip.MustParsePrefix("10.1.0.0/16"): "eu",
				netip.MustParsePrefix("10.2.0.0/16"): "us",
			},
			Preferences: map[string][]string{"eu": {"us"}, "us": {"eu"}},
		})
		require.NoError(t, err)
		tags := map[netip.Addr][]string{}
		for _, r := range []string{"eu", "us"} {
			for _, a := range s.RegionAddrs(r) {
				tags[netip.MustParseAddr(a)] = []string{r}
			}
		}
		w.Zone(failovertest.GlobalZone).SetAnswerFunc(s.FailoverName(), memory.AnswerFunc(failover.Geo(loc, tags)))
		euClient, usClient := netip.MustParseAddr("10.1.0.9"), netip.MustParseAddr("10.2.0.9")
		assert.Equal(t, []string{"192.0.2.1", "2001:db8:e::1"}, addrStrings(w.ResolveFrom("us", s.FailoverName(), euClient)))
		assert.Equal(t, []string{"198.51.100.1", "2001:db8:a::1"}, addrStrings(w.ResolveFrom("eu", s.FailoverName(), usClient)))
		assert.Len(t, w.Resolve("eu", s.FailoverName()), 4, "unplaced clients get every gateway")
	})
	s.Run(t)
}
