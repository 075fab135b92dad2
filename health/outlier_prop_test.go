package health

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Properties of the detector under random traffic and ticks: the ejected
// share never exceeds maxEjectionPercent except through alwaysEjectOne (one
// endpoint), and an ejected endpoint returns within min(base × mult, max)
// plus one interval.
func TestOutlierProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := DefaultOutlierConfig()
		cfg.MaxEjectionPercent = float64(rapid.IntRange(0, 100).Draw(t, "maxPct"))
		cfg.AlwaysEjectOne = rapid.Bool().Draw(t, "one")
		cfg.Consecutive5xx = rapid.IntRange(1, 4).Draw(t, "c5xx")
		cfg.EnforceGatewayErrors = rapid.Bool().Draw(t, "gw")
		cfg.ConsecutiveGatewayErrors = rapid.IntRange(1, 4).Draw(t, "cgw")
		cfg.SuccessRate = SuccessRateConfig{Enforce: rapid.Bool().Draw(t, "sr"), MinimumHosts: 2, RequestVolume: 3, StdevFactor: 1}
		cfg.FailurePercentage = FailurePercentageConfig{Enforce: rapid.Bool().Draw(t, "fp"), Threshold: 50, MinimumHosts: 2, RequestVolume: 3}
		cfg.Interval = time.Duration(10 * time.Second)
		cfg.BaseEjectionTime = time.Duration(time.Duration(rapid.IntRange(1, 60).Draw(t, "base")) * time.Second)
		cfg.MaxEjectionTime = time.Duration(cfg.BaseEjectionTime * time.Duration(rapid.IntRange(1, 5).Draw(t, "maxMul")))
		d, err := NewOutlier(cfg)
		if err != nil {
			t.Fatal(err)
		}
		n := rapid.IntRange(1, 12).Draw(t, "n")
		for i := 0; i < n; i++ {
			d.Add(fmt.Sprintf("e%d", i))
		}
		type ej struct {
			at  time.Time
			dur time.Duration
		}
		ejected := map[string]ej{}
		now := t0
		check := func(ev OutlierEvent) {
			switch ev.Kind {
			case Ejected:
				ejected[ev.Endpoint] = ej{ev.At, ev.For}
				if ev.For > cfg.MaxEjection() {
					t.Fatalf("ejection for %v beyond max %v", ev.For, cfg.MaxEjection())
				}
			case Returned:
				delete(ejected, ev.Endpoint)
			}
			share := 100 * float64(d.EjectedCount()) / float64(n)
			if share > cfg.MaxEjectionPercent && !(cfg.AlwaysEjectOne && d.EjectedCount() == 1) {
				t.Fatalf("%d of %d ejected (%.0f%% > %.0f%%)", d.EjectedCount(), n, share, cfg.MaxEjectionPercent)
			}
		}
		steps := rapid.IntRange(1, 300).Draw(t, "steps")
		for s := 0; s < steps; s++ {
			if rapid.IntRange(0, 9).Draw(t, "tick?") == 0 {
				now = now.Add(cfg.Interval)
				for _, ev := range d.Tick(now, nil) {
					check(ev)
				}
				for ep, e := range ejected {
					if now.Sub(e.at) > e.dur+cfg.Interval {
						t.Fatalf("%s ejected at %v for %v still out at %v", ep, e.at, e.dur, now)
					}
				}
				continue
			}
			ep := fmt.Sprintf("e%d", rapid.IntRange(0, n-1).Draw(t, "ep"))
			o := Response(rapid.SampledFrom([]int{200, 404, 500, 502, 503, 504}).Draw(t, "status"))
			if rapid.IntRange(0, 9).Draw(t, "local?") == 0 {
				o = LocalFailure()
			}
			if ev, ok := d.Report(now, ep, o); ok {
				check(ev)
			}
		}
	})
}
