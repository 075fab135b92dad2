package probe

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// machDyingProber passes its first passes probes; the target dies just
// after the last passing probe starts (that probe still passes, as late as
// the timeout allows), and every later probe hangs until its deadline and
// fails as a timeout.
type machDyingProber struct {
	mu      sync.Mutex
	passes  int
	timeout time.Duration
	diedAt  time.Time
}

func (d *machDyingProber) Probe(ctx context.Context) Result {
	d.mu.Lock()
	d.passes--
	n := d.passes
	if n == 0 {
		d.diedAt = time.Now()
	}
	d.mu.Unlock()
	if n >= 0 {
		if n == 0 {
			// The last pass arrives just before the timeout.
			select {
			case <-time.After(d.timeout - time.Millisecond):
			case <-ctx.Done():
			}
		}
		return Result{Status: Pass}
	}
	<-ctx.Done()
	return Result{Status: Fail, Kind: KindTimeout, Detail: "timeout"}
}

func (d *machDyingProber) died() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.diedAt
}

// machDetectWithMonitor runs one dying target under p in a real Monitor
// inside a synctest bubble and returns the time from its death to the event
// that stopped serving it.
func machDetectWithMonitor(t *testing.T, p Policy, seed uint64) time.Duration {
	var got time.Duration
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		pr := &machDyingProber{passes: 3, timeout: p.Timeout}
		var once sync.Once
		obs := ObserverFunc(func(e Event) {
			if !e.Served && e.Transition.Cause == CauseProbe && !pr.died().IsZero() {
				once.Do(func() {
					got = e.Transition.At.Sub(pr.died())
					cancel()
				})
			}
		})
		cfg := DefaultMonitorConfig()
		cfg.Seed = seed
		m, err := NewMonitor(cfg, obs, nil)
		require.NoError(t, err)
		require.NoError(t, m.Add(Target{ID: "dying", Prober: pr, Policy: p}))
		require.NoError(t, m.Run(ctx))
	})
	return got
}

// WorstCaseDetection is a bound on what the Monitor really does: in virtual
// time, a target that dies just after a passing probe started is out of
// service no later than the bound, and exactly at it without jitter.
func TestWorstCaseDetectionHoldsInMonitor(t *testing.T) {
	edgy := Envoy()
	edgy.UnhealthyEdgeInterval = 500 * time.Millisecond
	warn2 := DefaultPolicy()
	warn2.WarningThreshold, warn2.CriticalThreshold = 2, 4
	for name, p := range map[string]Policy{
		"record service":                   RecordService(),
		"record service, warning 2 of 4":   warn2,
		"envoy":                            Envoy(),
		"envoy, edge shorter than timeout": edgy,
		"proxy sync":                       ProxySync(),
		"consul 2/3":                       Consul(2, 0, 3),
		"route 53 fast":                    Route53(3, true),
		"gdnsd":                            Gdnsd(gdnsdUpThresh, gdnsdOkThresh, gdnsdDownThresh),
	} {
		t.Run(name, func(t *testing.T) {
			bound := WorstCaseDetection(p)
			// Probes on workers start on schedule: all but the event
			// loop's grain is reached.
			assert.Equal(t, bound-detectionGrain(p.withDefaults()), machDetectWithMonitor(t, p, 1), "no jitter: the bound is reached")

			j := p
			j.IntervalJitter = time.Second
			j.IntervalJitterPercent = 20
			jbound := WorstCaseDetection(j)
			for seed := uint64(1); seed <= 5; seed++ {
				got := machDetectWithMonitor(t, j, seed)
				assert.LessOrEqual(t, got, jbound, "seed %d", seed)
				assert.GreaterOrEqual(t, got, bound, "seed %d: jitter only adds", seed)
			}
		})
	}
}
