package probe

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestMonGrain: the event loop's wake-up grain is the largest of 1, 2, 4,
// 8, 16 and 32 ms within 4 % of the delay.
func TestMonGrain(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct{ d, want time.Duration }{
		{ms, ms}, {49 * ms, ms}, {50 * ms, 2 * ms}, {99 * ms, 2 * ms},
		{100 * ms, 4 * ms}, {199 * ms, 4 * ms}, {200 * ms, 8 * ms},
		{400 * ms, 16 * ms}, {799 * ms, 16 * ms}, {800 * ms, 32 * ms},
		{time.Second, 32 * ms}, {time.Hour, 32 * ms}, {0, ms},
	} {
		assert.Equal(t, c.want, monGrain(c.d), "delay %v", c.d)
	}
}

// TestLoopWakeAt: the loop's wake-up is the latest instant of the window
// that lies a whole number of milliseconds (at least one) plus
// loopWakeMargin after the moment it parks, or, when the window holds no
// such instant (it is narrower than 1 ms), the first one after lo.
func TestLoopWakeAt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		now := time.Unix(1000, 0)
		lo := now.Add(time.Duration(rapid.Int64Range(1, int64(20*time.Millisecond)).Draw(t, "lo")))
		hi := lo.Add(time.Duration(rapid.Int64Range(0, int64(10*time.Millisecond)).Draw(t, "width")))
		var want, first time.Time
		for k := time.Duration(1); k <= 40; k++ {
			c := now.Add(k*time.Millisecond + loopWakeMargin)
			if c.Before(lo) {
				continue
			}
			if first.IsZero() {
				first = c
			}
			if !c.After(hi) {
				want = c
			}
		}
		if want.IsZero() {
			want = first
		}
		if got := loopWakeAt(now, lo, hi); !got.Equal(want) {
			t.Fatalf("window [%v, %v] after now: wake-up %v, want %v", lo.Sub(now), hi.Sub(now), got.Sub(now), want.Sub(now))
		}
	})
}

// TestMonitorAnchorsLateStart: a probe that starts a little late (here
// behind another target's slow first probe, with one worker) is
// rescheduled from when it was due, so the lateness does not carry over;
// one that starts much later than twice the grain counts from its start.
func TestMonitorAnchorsLateStart(t *testing.T) {
	for _, c := range []struct {
		name     string
		slow     time.Duration // the first probe of target a
		anchored bool
	}{{"3ms late: anchored", 3 * time.Millisecond, true}, {"100ms late: from its start", 100 * time.Millisecond, false}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				starts := map[string][]time.Time{}
				prober := func(id string) Prober {
					return ProberFunc(func(context.Context) Result {
						mu.Lock()
						starts[id] = append(starts[id], time.Now())
						first := len(starts[id]) == 1
						mu.Unlock()
						if id == "a" && first {
							time.Sleep(c.slow)
						}
						return Result{Status: Pass}
					})
				}
				cfg := DefaultMonitorConfig()
				cfg.Concurrency = 1
				m, err := NewMonitor(cfg, nil, nil)
				require.NoError(t, err)
				pol := DefaultPolicy()
				pol.Interval = time.Second
				pol.InitialJitter = 0
				t0 := time.Now()
				require.NoError(t, m.Add(Target{ID: "a", Prober: prober("a"), Policy: pol}))
				require.NoError(t, m.Add(Target{ID: "b", Prober: prober("b"), Policy: pol}))
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- m.Run(ctx) }()
				time.Sleep(2*time.Second + 500*time.Millisecond)
				cancel()
				require.NoError(t, <-done)

				mu.Lock()
				defer mu.Unlock()
				b := starts["b"]
				require.GreaterOrEqual(t, len(b), 3)
				assert.Equal(t, c.slow, b[0].Sub(t0), "b's first probe waits for a's")
				want := b[0].Add(time.Second) // counted from its start
				if c.anchored {
					want = t0.Add(time.Second) // counted from when it was due
				}
				assert.Equal(t, want, b[1], "b's second probe")
				assert.Equal(t, want.Add(time.Second), b[2], "b's third probe")
			})
		})
	}
}
