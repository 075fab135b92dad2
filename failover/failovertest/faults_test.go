package failovertest_test

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/failover/failovertest"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/provider/providertest"
)

// TestManyRegions: three and five regions, two clusters each. One region
// is lost whole: the global name points at the failover name, so every
// client gets every survivor's gateways. A second region then loses one
// of its two clusters: its gateways leave that region's regional record
// and the failover record. When the first region returns, every region
// serves its own gateways again.
func TestManyRegions(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d regions", n), func(t *testing.T) {
			cfg := failovertest.DefaultConfig()
			s := failovertest.New(cfg)
			var regions []string
			for r := range n {
				region := fmt.Sprintf("r%d", r)
				regions = append(regions, region)
				s.Region(region)
				for c := range 2 {
					cluster := fmt.Sprintf("%s-c%d", region, c)
					s.Cluster(cluster, region).
						Gateway(cluster, cluster+"-g", fmt.Sprintf("10.%d.%d.1", r, c), fmt.Sprintf("2001:db8:%d:%d::1", r, c))
				}
			}
			app := s.AppName()
			var survivors []string
			for _, r := range regions[1:] {
				survivors = append(survivors, s.RegionAddrs(r)...)
			}
			s.At(0).Expect("r0", app, s.RegionAddrs("r0")...)
			// While r0 is dead the global name points at the failover
			// name, for every region's clients.
			s.At(30 * time.Second).RegionDown("r0")
			for _, r := range regions {
				s.At(30*time.Second).ExpectWithin(cfg.ControllerBound(), r, app, survivors...)
			}
			// r1 loses one of its clusters: it leaves r1's regional
			// record and the failover record.
			var rest []string
			for _, a := range survivors {
				if !slices.Contains(s.Addrs("r1-c0-g"), a) {
					rest = append(rest, a)
				}
			}
			s.At(3*time.Minute).ControllerDown("r1-c0").GatewayDown("r1-c0-g").
				ExpectWithin(cfg.ControllerBound(), "r1", s.RegionalName(), s.Addrs("r1-c1-g")...).
				ExpectWithin(cfg.ControllerBound(), "r2", app, rest...)
			// r0 comes back: every region serves its own gateways again.
			s.At(6 * time.Minute).RegionUp("r0")
			for _, r := range regions {
				want := s.RegionAddrs(r)
				if r == "r1" {
					want = s.Addrs("r1-c1-g")
				}
				s.At(6*time.Minute).ExpectWithin(cfg.RecoveryBound(), r, app, want...)
			}
			s.Run(t)
		})
	}
}

// TestReaderCannotList: eu's controllers cannot list the global zone for
// four minutes (their writes would still land). They see every global
// beat as unknown — no evidence — so they fail nobody over and hold the
// global name; eu keeps serving its own gateways through its regional
// record (its private zone is still readable), and a gateway failing in
// eu meanwhile still leaves eu's answer within the gateway bound. Once
// the listing works again, eu's failed gateway is back everywhere.
func TestReaderCannotList(t *testing.T) {
	cfg := failovertest.DefaultConfig()
	s := twoRegions(cfg)
	app := s.AppName()
	eu, us := s.RegionAddrs("eu"), s.RegionAddrs("us")
	var before int
	s.At(30*time.Second).Unreadable("eu", failovertest.GlobalZone).
		Do("count", func(_ *testing.T, w *failovertest.World) { before = w.Writes(s.GlobalName()) })
	s.At(60*time.Second).GatewayDown("eu-a").
		ExpectWithin(cfg.GatewayBound(), "eu", app, s.Addrs("eu-b")...)
	s.At(4*time.Minute).
		Expect("eu", app, s.Addrs("eu-b")...).
		Expect("us", app, us...).
		Do("no failover", func(t *testing.T, w *failovertest.World) {
			assert.Equal(t, before, w.Writes(s.GlobalName()), "global name written")
			d, ok := w.Decision("eu-1")
			assert.True(t, ok)
			assert.False(t, d.FailingOver)
			assert.Empty(t, d.GlobalTarget, "eu holds the global name while it cannot read")
		})
	s.At(4*time.Minute+30*time.Second).Readable("eu", failovertest.GlobalZone).
		GatewayUp("eu-a").
		ExpectWithin(cfg.RecoveryBound(), "eu", app, eu...).
		ExpectWithin(cfg.RecoveryBound(), "us", s.FailoverName(), cat(eu, us)...)
	s.Run(t)
}

// TestGatewayFlapping: a gateway down for 7 s in every 20 s fails at most
// two probes in a row (probes are at least 5 s apart), so under the
// default policy (warning after one failure, still served; critical after
// three) it is never withdrawn and its region's record is never
// rewritten. One down for 31 s in every 60 s is withdrawn within the
// gateway bound and comes back within the recovery bound, each time.
func TestGatewayFlapping(t *testing.T) {
	cfg := failovertest.DefaultConfig()
	s := twoRegions(cfg)
	app := s.AppName()
	eu := s.RegionAddrs("eu")
	s.Always("eu-a served while it flaps fast", func(w *failovertest.World) error {
		if w.Now() < 200*time.Second && !slices.Equal(addrStrings(w.Resolve("eu", app)), sorted(eu)) {
			return fmt.Errorf("eu's answer %v", w.Resolve("eu", app))
		}
		return nil
	})
	var before int
	s.At(0).Do("count", func(_ *testing.T, w *failovertest.World) { before = w.Writes(s.RegionalName()) })
	for i := range 10 {
		at := time.Duration(i)*20*time.Second + 5*time.Second
		s.At(at).GatewayDown("eu-a")
		s.At(at + 7*time.Second).GatewayUp("eu-a")
	}
	s.At(200*time.Second).Expect("eu", app, eu...).
		Do("never withdrawn", func(t *testing.T, w *failovertest.World) {
			assert.Equal(t, before, w.Writes(s.RegionalName()), "regional record rewritten by a flap")
			states := w.States("eu-a")
			assert.Contains(t, states, probe.Warning, "the flaps failed probes")
			assert.NotContains(t, states, probe.Critical)
		})
	for i := range 3 {
		at := 4*time.Minute + time.Duration(i)*time.Minute
		s.At(at).GatewayDown("eu-a").ExpectWithin(cfg.GatewayBound(), "eu", app, s.Addrs("eu-b")...)
		s.At(at+31*time.Second).GatewayUp("eu-a").ExpectWithin(cfg.RecoveryBound(), "eu", app, eu...)
	}
	s.Run(t)
}

// TestThrottledWhileRegionFails: the global zone refuses every write as
// throttled for 20 s while eu's controllers die. us still fails eu over,
// late by at most the throttle; us's own beats land again within the
// healthy duration (a self-heal beat first), so us is never seen failing.
// (A write outage longer than HealthyDuration + SkewTolerance cannot be
// hidden: no beat lands at all.)
func TestThrottledWhileRegionFails(t *testing.T) {
	cfg := failovertest.DefaultConfig()
	s := twoRegions(cfg)
	app := s.AppName()
	us := s.RegionAddrs("us")
	throttle := 20 * time.Second
	var beats int
	s.At(30*time.Second).Do("count", func(_ *testing.T, w *failovertest.World) { beats = w.Writes("health-001-us-1.example.test.") })
	s.At(30*time.Second+throttle-time.Millisecond).Do("throttled", func(t *testing.T, w *failovertest.World) {
		assert.Equal(t, beats, w.Writes("health-001-us-1.example.test."), "a global beat landed while throttled")
	})
	s.At(30*time.Second).ThrottleWrites(failovertest.GlobalZone, throttle).ControllerDown("eu-1").
		ExpectWithin(cfg.ControllerBound()+throttle, "eu", app, us...).
		ExpectWithin(cfg.ControllerBound()+throttle, "us", app, us...)
	for at := 30 * time.Second; at <= 4*time.Minute; at += 10 * time.Second {
		s.At(at+time.Second).Do("us alive", func(t *testing.T, w *failovertest.World) {
			d, ok := w.Decision("us-1")
			if assert.True(t, ok) {
				for _, r := range d.Regions {
					if r.Name == "us" {
						assert.Equal(t, failover.RegionAlive, r.State, "us seen %v at %v", r.State, w.Now())
					}
				}
			}
		})
	}
	s.At(4*time.Minute).Expect("us", app, us...).Expect("eu", app, us...)
	s.Run(t)
}

// TestEverythingDown: every gateway everywhere fails. No record may be
// emptied: the gateways are detected one by one, each leaves the sets
// while another is still served, and the last one served stays (keep
// last). From then on every client keeps the last answer it had — not
// empty, not rewritten — until the gateways come back.
func TestEverythingDown(t *testing.T) {
	cfg := failovertest.DefaultConfig()
	s := neverEmpty(twoRegions(cfg), "eu", "us")
	app := s.AppName()
	eu, us := s.RegionAddrs("eu"), s.RegionAddrs("us")
	names := []string{app, s.RegionalName(), s.FailoverName()}
	type seen struct {
		answers map[string][]netip.Addr
		writes  map[string]int
	}
	look := func(w *failovertest.World) seen {
		out := seen{answers: map[string][]netip.Addr{}, writes: map[string]int{}}
		for _, r := range []string{"eu", "us"} {
			for _, n := range names {
				out.answers[r+" "+n] = w.Resolve(r, n)
				out.writes[n] = w.Writes(n)
			}
		}
		return out
	}
	var last seen
	s.At(30*time.Second).GatewayDown("eu-a", "eu-b", "us-a", "us-b")
	s.At(30*time.Second+cfg.RegionGatewaysBound()).Do("last answers", func(t *testing.T, w *failovertest.World) {
		last = look(w)
		for k, v := range last.answers {
			assert.NotEmpty(t, v, "%s emptied", k)
		}
		t.Logf("last answers: %v", last.answers)
	})
	for _, at := range []time.Duration{3 * time.Minute, 6 * time.Minute} {
		s.At(at).Do("answers stay", func(t *testing.T, w *failovertest.World) {
			assert.Equal(t, last, look(w), "answers or writes changed while everything is down")
		})
	}
	s.At(6*time.Minute).GatewayUp("eu-a", "eu-b", "us-a", "us-b").
		ExpectWithin(cfg.RecoveryBound(), "eu", app, eu...).
		ExpectWithin(cfg.RecoveryBound(), "us", app, us...).
		ExpectWithin(cfg.RecoveryBound(), "us", s.FailoverName(), cat(eu, us)...)
	s.Run(t)
}

// TestClockSkew: eu's controller runs 4 s ahead and us's 4 s behind,
// within the 5 s tolerance: nobody fails over; a failure is still caught
// within the controller bound stretched by the skew.
func TestClockSkew(t *testing.T) {
	cfg := failovertest.DefaultConfig()
	s := twoRegions(cfg)
	app := s.AppName()
	eu, us := s.RegionAddrs("eu"), s.RegionAddrs("us")
	s.At(10*time.Second).Skew("eu-1", 4*time.Second).Skew("us-1", -4*time.Second)
	s.At(3*time.Minute).
		Expect("eu", app, eu...).
		Expect("us", app, us...).
		Do("no failover", func(t *testing.T, w *failovertest.World) {
			for _, c := range []string{"eu-1", "us-1"} {
				d, _ := w.Decision(c)
				assert.False(t, d.FailingOver, c)
			}
		})
	s.At(3*time.Minute).ControllerDown("us-1").
		ExpectWithin(cfg.ControllerBound()+8*time.Second, "us", app, eu...)
	s.Run(t)
}

// TestProviderBadDay: every call of every controller to every zone may be
// throttled (3 %) or fail transiently (2 %), through providertest.Faulty,
// for the whole run. Retries absorb it: nobody fails over by mistake, and
// a partial failure and a region loss are still handled, each within its
// bound plus two reconcile intervals of retries.
func TestProviderBadDay(t *testing.T) {
	cfg := failovertest.DefaultConfig()
	cfg.Faults = providertest.FaultConfig{ThrottleRate: 0.03, TransientRate: 0.02}
	interval := time.Duration(cfg.Heartbeat.ReconcileInterval)
	s := neverEmpty(twoRegions(cfg), "eu", "us")
	app := s.AppName()
	eu, us := s.RegionAddrs("eu"), s.RegionAddrs("us")
	s.At(0).Expect("eu", app, eu...).Expect("us", app, us...)
	s.At(time.Minute).GatewayDown("us-a").
		ExpectWithin(cfg.GatewayBound()+2*interval, "us", app, s.Addrs("us-b")...)
	s.At(3*time.Minute).
		Expect("eu", app, eu...).
		Do("nobody failing over", func(t *testing.T, w *failovertest.World) {
			for _, c := range []string{"eu-1", "us-1"} {
				d, _ := w.Decision(c)
				assert.False(t, d.FailingOver, c)
			}
		})
	s.At(3*time.Minute).RegionDown("eu").
		ExpectWithin(cfg.ControllerBound()+2*interval, "eu", app, s.Addrs("us-b")...)
	s.At(8*time.Minute).RegionUp("eu").
		ExpectWithin(cfg.RecoveryBound()+2*interval, "eu", app, eu...)
	s.At(10*time.Minute).Do("faults injected", func(t *testing.T, w *failovertest.World) {
		t.Logf("%d calls faulted", w.InjectedFaults())
		assert.Positive(t, w.InjectedFaults())
	})
	s.Run(t)
}

// TestFallbackWhenEverythingDies: a user's own topology policy
// (AllUnhealthy fallback) under the same kit. When every region is dead
// the global name points at the fallback target (outside the kit's
// zones, so the resolver's chain ends there); when a region returns it
// points home again.
func TestFallbackWhenEverythingDies(t *testing.T) {
	cfg := failovertest.DefaultConfig()
	cfg.Topology.AllUnhealthy = failover.Fallback
	cfg.Topology.FallbackTarget = "sorry.example.net"
	s := twoRegions(cfg)
	app := s.AppName()
	s.At(30*time.Second).GatewayDown("eu-a", "eu-b", "us-a", "us-b")
	s.At(30*time.Second+cfg.RegionGatewaysBound()).Do("fallback", func(t *testing.T, w *failovertest.World) {
		assert.Equal(t, []string{app, s.GlobalName(), "sorry.example.net."}, w.Chain("eu", app))
		assert.Empty(t, w.Resolve("us", app))
	})
	s.At(4*time.Minute).GatewayUp("us-a").
		ExpectWithin(cfg.RecoveryBound(), "us", app, s.Addrs("us-a")...).
		ExpectWithin(cfg.RecoveryBound(), "eu", app, s.Addrs("us-a")...)
	s.Run(t)
}

// TestThrottledReadsAndWrites: the global zone refuses every call for
// 25 s. Readers see nothing (unknown, no evidence), writers write
// nothing; when the throttle lifts, beats are fresh again before anyone
// can judge them stale, so nobody fails over and no answer changes.
func TestThrottledReadsAndWrites(t *testing.T) {
	cfg := failovertest.DefaultConfig()
	s := neverEmpty(twoRegions(cfg), "eu", "us")
	app := s.AppName()
	eu, us := s.RegionAddrs("eu"), s.RegionAddrs("us")
	var before int
	s.At(30*time.Second).Throttle(failovertest.GlobalZone, 25*time.Second).
		Do("count", func(_ *testing.T, w *failovertest.World) { before = w.Writes(s.GlobalName()) })
	s.Always("nobody fails over", func(w *failovertest.World) error {
		for _, c := range []string{"eu-1", "us-1"} {
			if d, ok := w.Decision(c); ok && d.FailingOver {
				return fmt.Errorf("%s fails over at %v", c, w.Now())
			}
		}
		return nil
	})
	s.At(3*time.Minute).
		Expect("eu", app, eu...).
		Expect("us", app, us...).
		Do("global name untouched", func(t *testing.T, w *failovertest.World) {
			assert.Equal(t, before, w.Writes(s.GlobalName()))
		})
	s.Run(t)
}
