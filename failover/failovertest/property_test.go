package failovertest_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gslbkit/gslb/failover/failovertest"
)

// TestPropertyRandomTimelines plays random timelines of gateway, controller,
// partition and throttle faults over two regions, then repairs everything.
// Invariants: at every zone change, every region's clients get a non-empty
// answer of declared addresses for the app name; once everything has been
// repaired for two recovery bounds, every region's clients get exactly
// their own gateways and the failover name holds every gateway.
func TestPropertyRandomTimelines(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := failovertest.DefaultConfig()
		cfg.Seed = rapid.Uint64Range(1, 1<<20).Draw(rt, "seed")
		s := twoRegions(cfg)
		app := s.AppName()
		gateways := []string{"eu-a", "eu-b", "us-a", "us-b"}
		clusters := []string{"eu-1", "us-1"}
		down := map[string]bool{}

		var mu sync.Mutex
		var problems []string
		report := func(format string, args ...any) {
			mu.Lock()
			problems = append(problems, fmt.Sprintf(format, args...))
			mu.Unlock()
		}
		var all []string
		for _, r := range []string{"eu", "us"} {
			all = append(all, s.RegionAddrs(r)...)
		}
		s.Always("app name answers", func(w *failovertest.World) error {
			for _, r := range []string{"eu", "us"} {
				got := w.Resolve(r, app)
				if len(got) == 0 {
					report("%v: empty answer in %s (chain %v)", w.Now(), r, w.Chain(r, app))
				}
				for _, a := range got {
					if !slices.Contains(all, a.String()) {
						report("%v: undeclared %s in %s", w.Now(), a, r)
					}
				}
			}
			return nil
		})

		at := time.Duration(0)
		n := rapid.IntRange(1, 8).Draw(rt, "events")
		for range n {
			at += time.Duration(rapid.IntRange(1, 60).Draw(rt, "gap")) * time.Second
			m := s.At(at)
			switch rapid.IntRange(0, 4).Draw(rt, "kind") {
			case 0:
				m.GatewayDown(rapid.SampledFrom(gateways).Draw(rt, "gateway"))
			case 1:
				m.GatewayUp(rapid.SampledFrom(gateways).Draw(rt, "gateway"))
			case 2:
				c := rapid.SampledFrom(clusters).Draw(rt, "cluster")
				if down[c] {
					m.ControllerUp(c)
				} else {
					m.ControllerDown(c)
				}
				down[c] = !down[c]
			case 3:
				m.Partition("eu", "us")
			case 4:
				m.ThrottleWrites(failovertest.GlobalZone, time.Duration(rapid.IntRange(1, 30).Draw(rt, "throttle"))*time.Second)
			}
		}

		repair := at + time.Second
		m := s.At(repair).GatewayUp(gateways...).Heal("eu", "us")
		for _, c := range clusters {
			if down[c] {
				m.ControllerUp(c)
			}
		}
		settled := repair + 2*cfg.RecoveryBound()
		s.At(settled).Do("converged", func(_ *testing.T, w *failovertest.World) {
			for _, r := range []string{"eu", "us"} {
				if got, want := addrStrings(w.Resolve(r, app)), sorted(s.RegionAddrs(r)); !slices.Equal(got, want) {
					report("%v: %s in %s: got %v, want %v", w.Now(), app, r, got, want)
				}
				if got, want := addrStrings(w.Resolve(r, s.FailoverName())), sorted(all); !slices.Equal(got, want) {
					report("%v: failover name in %s: got %v, want %v", w.Now(), r, got, want)
				}
			}
		})
		s.Run(t)
		if len(problems) > 0 {
			rt.Fatalf("%d problems, first: %s", len(problems), problems[0])
		}
	})
}
