package probe

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

// machSimulateDeath runs the machine m (just after it observed a passing
// probe that started at time 0 and returned next) through failing probes,
// each as late as the Monitor may start it (largest jitter) and failing as
// late as the timeout, and returns when the target stopped being served.
func machSimulateDeath(m *Machine, next time.Duration) time.Duration {
	p := m.Policy()
	j := p.jitter()
	t := p.Timeout
	start := time.Duration(0)
	for i := 0; ; i++ {
		start += max(next+j.Max(next), t) // prior result came at most t after its start
		st := m.Observe(machT0.Add(start+t), Result{Status: Fail, Kind: KindTimeout})
		if !m.Served() {
			return start + t
		}
		next = st.Next
		if i > 1e6 {
			panic("target never stopped being served")
		}
	}
}

// machBruteDetection tries every history of results of up to depth
// letters (P, F, N), then a pass, then the death, and returns the longest
// time to "not served" and whether any history was served after its pass.
func machBruteDetection(p Policy, depth int) (worst time.Duration, any bool) {
	var walk func(m *Machine, d int)
	walk = func(m *Machine, d int) {
		c := *m
		st := c.Observe(machT0, Result{Status: Pass})
		if c.Served() {
			any = true
			if w := machSimulateDeath(&c, st.Next); w > worst {
				worst = w
			}
		}
		if d == 0 {
			return
		}
		for _, s := range []Status{Pass, Fail, FailNow} {
			c := *m
			c.Observe(machT0, Result{Status: s})
			walk(&c, d-1)
		}
	}
	m, err := NewMachine(p)
	if err != nil {
		panic(err)
	}
	walk(m, depth)
	return worst, any
}

func TestWorstCaseDetectionFormula(t *testing.T) {
	s := time.Second
	// g: one wake-up grain of the event loop, 32 ms for these intervals.
	g := 32 * time.Millisecond
	jit := func(p Policy) Policy { p.IntervalJitter = s; p.IntervalJitterPercent = 10; return p }
	cases := []struct {
		name string
		p    Policy
		want time.Duration
	}{
		// w=1, c=3, I=10s, T=1s: 1·10 + 2·5 + 1.
		{"record service default", RecordService(), 21*s + g},
		// J(10s) = 1s + 1s, J(5s) = 1s + 0.5s: 1·12 + 2·6.5 + 1.
		{"record service with jitter", jit(RecordService()), 26*s + g},
		// I=3s, e=3s, c=3, T=1s: 3 + 2·3 + 1.
		{"envoy", Envoy(), 10*s + g},
		{"envoy with edge interval", func() Policy { p := Envoy(); p.UnhealthyEdgeInterval = s; return p }(), 6*s + g},
		// The timeout dominates a short edge interval: 3 + 2·max(0.5, 1) + 1.
		{"envoy timeout longer than edge", func() Policy { p := Envoy(); p.UnhealthyEdgeInterval = s / 2; return p }(), 6*s + g},
		// Route 53, 30s, N=3, T=6s: 30 + 2·30 + 6.
		{"route 53", Route53(3, false), 96*s + g},
		{"proxy sync", ProxySync(), 13*s + g},
		{"gdnsd", Gdnsd(gdnsdUpThresh, gdnsdOkThresh, gdnsdDownThresh), 105*s + g},
		{"zero policy is the default", Policy{}, WorstCaseDetection(DefaultPolicy())},
		{"invalid policy", Policy{Interval: -1}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, WorstCaseDetection(c.p))
		})
	}
}

func TestWorstCaseDetectionSaturates(t *testing.T) {
	p := DefaultPolicy()
	p.Interval = MaxInterval
	p.Timeout = p.Interval
	p.MaxBackoff = p.Interval
	p.CriticalThreshold = MaxThreshold
	p.IntervalJitter = MaxInterval
	p.IntervalJitterPercent = 100
	assert.Greater(t, WorstCaseDetection(p), time.Duration(0))
}

// The formula against a brute-force run of the machine over every short
// history, for the presets and for random policies: it is an upper bound,
// and it is reached, but for the event loop's wake-up grain (the machine
// runs on schedule; the loop may start a probe one grain late).
func TestWorstCaseDetectionMatchesSimulation(t *testing.T) {
	presets := map[string]Policy{
		"record service": RecordService(), "envoy": Envoy(), "proxy sync": ProxySync(),
		"consul 2/3": Consul(2, 0, 3), "consul 1/2/4": Consul(1, 2, 4),
		"route 53": Route53(3, true), "gdnsd small": Gdnsd(3, 2, 3),
	}
	for name, p := range presets {
		t.Run(name, func(t *testing.T) {
			worst, any := machBruteDetection(p, 6)
			assert.True(t, any)
			assert.Equal(t, WorstCaseDetection(p), worst+detectionGrain(p.withDefaults()))
		})
	}
	t.Run("random policies", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			p := machGenPolicy(t)
			worst, any := machBruteDetection(p, 5)
			if !any {
				t.Fatalf("no history leaves the target served")
			}
			if got := WorstCaseDetection(p); got != worst+detectionGrain(p.withDefaults()) {
				t.Fatalf("formula %v, simulation %v (+ grain %v)", got, worst, detectionGrain(p.withDefaults()))
			}
		})
	})
}
