package probe

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// workerCounts returns the worker goroutines alive, the most alive at once
// and the idle ones.
func (m *Monitor) workerCounts() (alive, peak, idle int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.workers, m.peakWorkers, len(m.idle)
}

// monBurstPolicy probes every second with no jitter, so every target added
// at once is due at the same instants.
func monBurstPolicy() Policy {
	p := DefaultPolicy()
	p.Interval = time.Second
	p.Timeout = time.Second
	return p
}

func TestMonitorWorkersOnDemand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := monNew(t, nil, func(c *MonitorConfig) { c.Concurrency = 8 })
		stop := monStart(t, m)
		synctest.Wait()
		alive, _, _ := m.workerCounts()
		assert.Equal(t, 0, alive, "no target: no worker")

		require.NoError(t, m.Add(Target{ID: "a", Prober: ProberFunc(func(context.Context) Result { return Result{Status: Pass} }), Policy: monBurstPolicy()}))
		time.Sleep(10 * time.Second)
		synctest.Wait()
		alive, peak, _ := m.workerCounts()
		assert.Equal(t, 1, alive, "one fast target: one worker")
		assert.Equal(t, 1, peak)

		require.NoError(t, m.Remove("a"))
		time.Sleep(2 * monWorkerIdle)
		synctest.Wait()
		alive, _, _ = m.workerCounts()
		assert.Equal(t, 0, alive, "an idle worker exits even when nothing is due")
		stop()
	})
}

func TestMonitorWorkersFallBackAfterBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const conc = 8
		var slow atomic.Bool
		slow.Store(true)
		prober := ProberFunc(func(ctx context.Context) Result {
			if slow.Load() {
				time.Sleep(900 * time.Millisecond)
			}
			return Result{Status: Pass}
		})
		m := monNew(t, nil, func(c *MonitorConfig) { c.Concurrency = conc })
		for i := range 40 {
			require.NoError(t, m.Add(Target{ID: fmt.Sprint("t", i), Prober: prober, Policy: monBurstPolicy()}))
		}
		stop := monStart(t, m)
		// run lets n tenths of a virtual second pass, checking the bound at
		// each.
		run := func(n int) {
			for range n {
				time.Sleep(100 * time.Millisecond)
				synctest.Wait()
				alive, _, _ := m.workerCounts()
				require.LessOrEqual(t, alive, conc)
			}
		}

		// The burst: 40 probes of 900 ms due each second, 8 at a time.
		run(50)
		_, peak, _ := m.workerCounts()
		assert.Equal(t, conc, peak, "the burst used every allowed worker")

		// Afterwards one fast target is left: the other workers retire.
		slow.Store(false)
		for i := 1; i < 40; i++ {
			require.NoError(t, m.Remove(fmt.Sprint("t", i)))
		}
		run(200)
		alive, peak, idle := m.workerCounts()
		assert.Equal(t, 1, alive, "back to the one worker the remaining target needs")
		assert.Equal(t, 1, idle)
		assert.Equal(t, conc, peak)
		st, ok := m.Stats("t0")
		require.True(t, ok)
		assert.Greater(t, st.Probes, uint64(20))

		stop()
		alive, _, idle = m.workerCounts()
		assert.Equal(t, 0, alive, "Run waits for every worker")
		assert.Equal(t, 0, idle)
	})
}

func TestMonitorWorkersStopWhileBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		blocked := ProberFunc(func(ctx context.Context) Result {
			<-ctx.Done()
			return Result{Status: Fail, Kind: KindTimeout}
		})
		m := monNew(t, nil, func(c *MonitorConfig) { c.Concurrency = 4 })
		for i := range 6 {
			require.NoError(t, m.Add(Target{ID: fmt.Sprint("b", i), Prober: blocked, Policy: monBurstPolicy()}))
		}
		stop := monStart(t, m)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		alive, _, idle := m.workerCounts()
		assert.Equal(t, 4, alive)
		assert.Equal(t, 0, idle)
		stop()
		alive, _, _ = m.workerCounts()
		assert.Equal(t, 0, alive)

		// A second Run starts workers again.
		stop = monStart(t, m)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		alive, _, _ = m.workerCounts()
		assert.Equal(t, 4, alive)
		stop()
	})
}
