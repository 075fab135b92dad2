package health

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Unix(1_700_000_000, 0)

func newTestOutlier(t testing.TB, n int, mod func(*OutlierConfig)) *Outlier {
	t.Helper()
	cfg := DefaultOutlierConfig()
	cfg.MaxEjectionPercent = 100
	cfg.SuccessRate.Enforce = false
	if mod != nil {
		mod(&cfg)
	}
	d, err := NewOutlier(cfg)
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		d.Add(fmt.Sprintf("ep%d", i))
	}
	return d
}

func report(d *Outlier, now time.Time, ep string, statuses ...int) (ejected bool) {
	for _, s := range statuses {
		var o Outcome
		if s < 0 {
			o = LocalFailure()
		} else {
			o = Response(s)
		}
		if _, ok := d.Report(now, ep, o); ok {
			ejected = true
		}
	}
	return ejected
}

func TestEnvoyOutlierRule1Counting(t *testing.T) {
	cases := []struct {
		name     string
		mod      func(*OutlierConfig)
		statuses []int
		ejected  bool
	}{
		{"5xx ejects at exactly consecutive5xx", nil, []int{500, 500, 500, 500, 500}, true},
		{"four 5xx do not eject", nil, []int{500, 500, 500, 500}, false},
		{"a non-5xx resets the 5xx count", nil, []int{500, 500, 500, 500, 200, 500}, false},
		{"a 4xx is a non-5xx and resets", nil, []int{500, 500, 500, 500, 404, 500}, false},
		{"gateway errors are not enforced by default", func(c *OutlierConfig) { c.Consecutive5xx = 0 }, []int{502, 503, 504, 502, 503}, false},
		{"gateway errors eject when enforced", func(c *OutlierConfig) { c.Consecutive5xx = 0; c.EnforceGatewayErrors = true }, []int{502, 503, 504, 502, 503}, true},
		{"another 5xx resets the gateway count", func(c *OutlierConfig) { c.Consecutive5xx = 0; c.EnforceGatewayErrors = true }, []int{502, 503, 504, 502, 500, 503}, false},
		{"local-origin failures eject on their own count", nil, []int{-1, -1, -1, -1, -1}, true},
		{"a response resets the local-origin count", nil, []int{-1, -1, -1, -1, 200, -1}, false},
		{"local-origin failures are not 5xx", func(c *OutlierConfig) { c.ConsecutiveLocalOriginFailures = 0 }, []int{-1, -1, -1, -1, -1, -1}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newTestOutlier(t, 2, c.mod)
			require.Equal(t, c.ejected, report(d, t0, "ep0", c.statuses...))
			require.Equal(t, c.ejected, d.Ejected("ep0"))
		})
	}
}

func TestEnvoyOutlierRule1ThresholdReachedExactly(t *testing.T) {
	// A count that passes its threshold while the cap forbids ejection does
	// not eject later: the threshold must be reached exactly.
	d := newTestOutlier(t, 2, func(c *OutlierConfig) { c.MaxEjectionPercent = 0 })
	require.False(t, report(d, t0, "ep0", 500, 500, 500, 500, 500))
	d.cfg.MaxEjectionPercent = 100
	require.False(t, report(d, t0, "ep0", 500, 500))
}

func TestEnvoyOutlierRule2Cap(t *testing.T) {
	t.Run("default 10 percent with fewer than 10 endpoints ejects nothing", func(t *testing.T) {
		d := newTestOutlier(t, 9, func(c *OutlierConfig) { c.MaxEjectionPercent = 10 })
		require.False(t, report(d, t0, "ep0", 500, 500, 500, 500, 500))
	})
	t.Run("10 endpoints allow one ejection at 10 percent", func(t *testing.T) {
		d := newTestOutlier(t, 10, func(c *OutlierConfig) { c.MaxEjectionPercent = 10 })
		require.True(t, report(d, t0, "ep0", 500, 500, 500, 500, 500))
		require.False(t, report(d, t0, "ep1", 500, 500, 500, 500, 500))
	})
	t.Run("alwaysEjectOne allows one when none is ejected", func(t *testing.T) {
		d := newTestOutlier(t, 3, func(c *OutlierConfig) { c.MaxEjectionPercent = 10; c.AlwaysEjectOne = true })
		require.True(t, report(d, t0, "ep0", 500, 500, 500, 500, 500))
		require.False(t, report(d, t0, "ep1", 500, 500, 500, 500, 500), "only one beyond the cap")
	})
	t.Run("the cap reads 100 x (ejected+1) / total", func(t *testing.T) {
		d := newTestOutlier(t, 4, func(c *OutlierConfig) { c.MaxEjectionPercent = 50 })
		require.True(t, report(d, t0, "ep0", 500, 500, 500, 500, 500))  // 25 %
		require.True(t, report(d, t0, "ep1", 500, 500, 500, 500, 500))  // 50 %
		require.False(t, report(d, t0, "ep2", 500, 500, 500, 500, 500)) // 75 %
	})
}

func TestEnvoyOutlierRule3And4MultiplierAndReturn(t *testing.T) {
	d := newTestOutlier(t, 2, func(c *OutlierConfig) {
		c.BaseEjectionTime = time.Duration(30 * time.Second)
		c.MaxEjectionTime = time.Duration(100 * time.Second)
		c.Interval = time.Duration(10 * time.Second)
	})
	now := t0
	wantFor := []time.Duration{30 * time.Second, 60 * time.Second, 90 * time.Second, 100 * time.Second, 100 * time.Second}
	wantMult := []int{1, 2, 3, 4, 5} // raised while mult × base < max + base (130 s): 4 × 30 s = 120 s still raises
	for i := range wantFor {
		ev, ok := d.Report(now, "ep0", Response(500))
		for !ok {
			ev, ok = d.Report(now, "ep0", Response(500))
		}
		require.Equal(t, wantFor[i], ev.For, "ejection %d", i+1)
		require.Equal(t, wantMult[i], ev.Multiplier, "ejection %d", i+1)
		// Not back one tick before its time; back at the first tick after.
		require.Empty(t, d.Tick(now.Add(wantFor[i]-time.Second), nil))
		evs := d.Tick(now.Add(wantFor[i]), nil)
		require.Len(t, evs, 1)
		require.Equal(t, Returned, evs[0].Kind)
		require.Equal(t, ReasonEjectionTimeElapsed, evs[0].Reason)
		now = now.Add(wantFor[i])
	}
}

func TestEnvoyOutlierRule4ReturnResetsCounters(t *testing.T) {
	d := newTestOutlier(t, 2, nil)
	report(d, t0, "ep0", 500, 500, 500, 500, 500)
	report(d, t0, "ep0", 500, 500, 500) // counted while ejected
	d.Tick(t0.Add(30*time.Second), nil)
	require.False(t, d.Ejected("ep0"))
	require.False(t, report(d, t0.Add(31*time.Second), "ep0", 500, 500, 500, 500), "counters restart at 0")
	require.True(t, report(d, t0.Add(31*time.Second), "ep0", 500))
}

func TestEnvoyOutlierRule5MultiplierDecay(t *testing.T) {
	d := newTestOutlier(t, 2, func(c *OutlierConfig) { c.Interval = time.Duration(10 * time.Second) })
	report(d, t0, "ep0", 500, 500, 500, 500, 500)
	d.Tick(t0.Add(30*time.Second), nil) // returns, multiplier 1
	require.Equal(t, 1, d.Multiplier("ep0"))
	d.Tick(t0.Add(35*time.Second), nil) // returned less than one interval ago
	require.Equal(t, 1, d.Multiplier("ep0"))
	d.Tick(t0.Add(40*time.Second), nil)
	require.Equal(t, 0, d.Multiplier("ep0"))
	d.Tick(t0.Add(50*time.Second), nil)
	require.Equal(t, 0, d.Multiplier("ep0"), "never below 0")
}

func TestEnvoyOutlierRule6ActiveCheckEndsEjection(t *testing.T) {
	d := newTestOutlier(t, 2, nil)
	report(d, t0, "ep0", 500, 500, 500, 500, 500)
	require.False(t, d.Healthy("ep0", true), "ejected is unhealthy even when the active check passes")
	ev, ok := d.ActiveCheckPassed(t0.Add(time.Second), "ep0")
	require.True(t, ok)
	require.Equal(t, ReasonActiveCheck, ev.Reason)
	require.True(t, d.Healthy("ep0", true))
	require.False(t, d.Healthy("ep0", false), "combined: active failure is unhealthy")
	_, ok = d.ActiveCheckPassed(t0.Add(time.Second), "ep0")
	require.False(t, ok, "not ejected: nothing to end")
}

func TestEnvoyOutlierRule7SuccessRate(t *testing.T) {
	d := newTestOutlier(t, 6, func(c *OutlierConfig) {
		c.SuccessRate = SuccessRateConfig{Enforce: true, MinimumHosts: 5, RequestVolume: 100, StdevFactor: 1.9}
		c.Consecutive5xx = 0
	})
	for i := 0; i < 6; i++ {
		ep := fmt.Sprintf("ep%d", i)
		for r := 0; r < 100; r++ {
			st := 200
			if (i == 5 && r%2 == 0) || (i < 5 && r%50 == 0) {
				st = 500
			}
			d.Report(t0, ep, Response(st))
		}
	}
	evs := d.Tick(t0.Add(10*time.Second), nil)
	require.Len(t, evs, 1)
	require.Equal(t, "ep5", evs[0].Endpoint)
	require.Equal(t, ReasonSuccessRate, evs[0].Reason)

	t.Run("too few qualifying hosts", func(t *testing.T) {
		d := newTestOutlier(t, 6, func(c *OutlierConfig) { c.SuccessRate.Enforce = true; c.Consecutive5xx = 0 })
		for i := 0; i < 4; i++ {
			for r := 0; r < 100; r++ {
				d.Report(t0, fmt.Sprintf("ep%d", i), Response(map[bool]int{true: 500, false: 200}[i == 0]))
			}
		}
		require.Empty(t, d.Tick(t0.Add(10*time.Second), nil))
	})
}

func TestEnvoyOutlierRule7FailurePercentage(t *testing.T) {
	d := newTestOutlier(t, 5, func(c *OutlierConfig) {
		c.FailurePercentage = FailurePercentageConfig{Enforce: true, Threshold: 85, MinimumHosts: 5, RequestVolume: 50}
		c.Consecutive5xx = 0
		c.ConsecutiveLocalOriginFailures = 0
	})
	for i := 0; i < 5; i++ {
		for r := 0; r < 50; r++ {
			st := 200
			if i == 0 && r < 43 { // 86 % failures
				st = 503
			}
			if i == 1 && r < 42 { // 84 %
				st = 503
			}
			d.Report(t0, fmt.Sprintf("ep%d", i), Response(st))
		}
	}
	evs := d.Tick(t0.Add(10*time.Second), nil)
	require.Len(t, evs, 1)
	require.Equal(t, "ep0", evs[0].Endpoint)
	require.Equal(t, ReasonFailurePercentage, evs[0].Reason)
	// The next interval starts its counts afresh.
	require.Empty(t, d.Tick(t0.Add(20*time.Second), nil))
}

func TestOutlierDefaultsAreEnvoys(t *testing.T) {
	c := DefaultOutlierConfig()
	require.Equal(t, 5, c.Consecutive5xx)
	require.Equal(t, 5, c.ConsecutiveGatewayErrors)
	require.False(t, c.EnforceGatewayErrors)
	require.Equal(t, 10*time.Second, c.Interval)
	require.Equal(t, 30*time.Second, c.BaseEjectionTime)
	require.Equal(t, 300*time.Second, c.MaxEjection())
	require.Equal(t, 10.0, c.MaxEjectionPercent)
	require.True(t, c.SuccessRate.Enforce)
	require.False(t, c.FailurePercentage.Enforce)
	c.BaseEjectionTime = time.Duration(400 * time.Second)
	require.Equal(t, 400*time.Second, c.MaxEjection(), "max defaults to max(300s, base)")
	require.Equal(t, 3*time.Second, EnvoyGatewayOutlierConfig().Interval)
}

func TestDecodeEnvoyGatewayPassive(t *testing.T) {
	c, err := DecodeEnvoyGatewayPassive([]byte(`{"consecutive5XxErrors":5,"interval":"3s","baseEjectionTime":"30s","maxEjectionPercent":50,"alwaysEjectOneEndpoint":true}`))
	require.NoError(t, err)
	require.Equal(t, 3*time.Second, c.Interval)
	require.Equal(t, 50.0, c.MaxEjectionPercent)
	require.True(t, c.AlwaysEjectOne)
	c, err = DecodeEnvoyGatewayPassive([]byte(`{}`))
	require.NoError(t, err)
	require.Equal(t, 3*time.Second, c.Interval, "Envoy Gateway's default interval")
	for _, bad := range []string{`{"maxEjectionPercent":101}`, `{"interval":"0s"}`, `{"bogus":1}`, `[]`, `{"consecutive5XxErrors":-1}`} {
		_, err := DecodeEnvoyGatewayPassive([]byte(bad))
		require.ErrorIs(t, err, ErrInvalidConfig, bad)
	}
}

func TestOutlierConfigValidateNamesField(t *testing.T) {
	c := DefaultOutlierConfig()
	c.MaxEjectionTime = time.Duration(time.Second)
	err := c.Validate()
	require.ErrorContains(t, err, "maxEjectionTime = 1s")
	require.ErrorContains(t, err, "allowed")
}

func TestOutlierRemoveAndUnknown(t *testing.T) {
	d := newTestOutlier(t, 2, nil)
	report(d, t0, "ep0", 500, 500, 500, 500, 500)
	require.Equal(t, 1, d.EjectedCount())
	d.Remove("ep0")
	require.Equal(t, 0, d.EjectedCount())
	require.False(t, report(d, t0, "nope", 500, 500, 500, 500, 500))
}

func BenchmarkOutlierReport(b *testing.B) {
	d := newTestOutlier(b, 100, nil)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		st := 200
		if i%7 == 0 {
			st = 503
		}
		d.Report(t0, "ep42", Response(st))
	}
}

func BenchmarkOutlierTick10000(b *testing.B) {
	d := newTestOutlier(b, 10000, func(c *OutlierConfig) { c.SuccessRate.Enforce = true; c.SuccessRate.RequestVolume = 1 })
	for i := 0; i < 10000; i++ {
		d.Report(t0, fmt.Sprintf("ep%d", i), Response(200))
	}
	var buf []OutlierEvent
	b.ReportAllocs()
	now := t0
	for b.Loop() {
		now = now.Add(10 * time.Second)
		buf = d.Tick(now, buf[:0])
	}
}

func TestOutlierTickEventsInNameOrder(t *testing.T) {
	cfg := DefaultOutlierConfig()
	cfg.MaxEjectionPercent = 100
	cfg.SuccessRate.Enforce = false
	d, err := NewOutlier(cfg)
	require.NoError(t, err)
	for _, ep := range []string{"m", "c", "x", "a", "q", "b"} {
		d.Add(ep)
	}
	d.Add("c") // again: no duplicate
	d.Remove("q")
	d.Remove("zz") // unknown: nothing
	require.Equal(t, 5, d.Len())
	for _, ep := range []string{"x", "b", "m"} {
		report(d, t0, ep, 500, 500, 500, 500, 500)
	}
	var got []string
	for _, ev := range d.Tick(t0.Add(30*time.Second), nil) {
		got = append(got, ev.Endpoint)
	}
	require.Equal(t, []string{"b", "m", "x"}, got)
}

func TestZeroConfigsTakeDefaults(t *testing.T) {
	var oc OutlierConfig
	require.NoError(t, oc.Validate())
	d, err := NewOutlier(oc)
	require.NoError(t, err)
	require.Equal(t, 10*time.Second, d.Config().Interval)
	require.Equal(t, 30*time.Second, d.Config().BaseEjectionTime)
	require.Equal(t, 0, d.Config().Consecutive5xx, "0 keeps its meaning: the rule is off")

	var ac AddressConfig
	require.NoError(t, ac.Validate())
	_, err = NewExternalAddress(ac, nil)
	require.NoError(t, err)

	bad := DefaultOutlierConfig()
	bad.SuccessRate.StdevFactor = 101
	var fe *FieldError
	require.ErrorAs(t, bad.Validate(), &fe)
	require.Equal(t, "successRate.stdevFactor", fe.Path)
	require.ErrorIs(t, bad.Validate(), ErrInvalidConfig)
}

func TestConfigJSONDurations(t *testing.T) {
	c := DefaultOutlierConfig()
	b, err := json.Marshal(c)
	require.NoError(t, err)
	require.Contains(t, string(b), `"interval":"10s"`)
	var back OutlierConfig
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, c, back)
	ac := DefaultAddressConfig()
	require.NoError(t, json.Unmarshal([]byte(`{"refresh":"1m","maxStale":0}`), &ac))
	require.Equal(t, time.Minute, ac.Refresh)
	require.Equal(t, 5*time.Second, ac.Timeout)
	require.Equal(t, time.Duration(0), ac.MaxStale)
}
