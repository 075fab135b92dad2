package probe

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMonitorConcurrentCallers hammers a running Monitor from several
// goroutines (Add, Remove, Update, Override, SetDisabled, Stats, Snapshot)
// while an observer calls back into it, and checks that no removed target
// is probed after Remove returned, that events stay gap-free, and that Run
// stops cleanly. The race detector checks the locking.
func TestMonitorConcurrentCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu      sync.Mutex
			removed = map[string]bool{} // IDs whose Remove has returned
			late    atomic.Int64        // probes that started after their Remove returned
			seq     uint64
			gaps    int
		)
		var m *Monitor
		obs := ObserverFunc(func(e Event) {
			mu.Lock()
			if e.Seq != seq+1 {
				gaps++
			}
			seq = e.Seq
			mu.Unlock()
			// Calling back into the Monitor from the observer must not deadlock.
			_, _ = m.Stats(e.Target)
			if e.Transition.To == Critical && e.Seq%7 == 0 {
				_ = m.Override(e.Target, Passing)
			}
		})
		cfg := DefaultMonitorConfig()
		cfg.Seed = 3
		cfg.Concurrency = 4
		var err error
		m, err = NewMonitor(cfg, obs, nil)
		require.NoError(t, err)

		prober := func(id string, failEvery int) Prober {
			var n atomic.Int64
			return ProberFunc(func(ctx context.Context) Result {
				mu.Lock()
				gone := removed[id]
				mu.Unlock()
				if gone {
					late.Add(1)
				}
				time.Sleep(time.Duration(n.Add(1)%3) * 100 * time.Millisecond)
				if failEvery > 0 && n.Load()%int64(failEvery) == 0 {
					return Result{Status: Fail, Kind: KindTimeout}
				}
				return Result{Status: Pass}
			})
		}
		pol := DefaultPolicy()
		pol.Interval = 2 * time.Second
		pol.Timeout = time.Second
		pol.IntervalJitterPercent = 20

		stop := monStart(t, m)
		var wg sync.WaitGroup
		for g := range 6 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 99))
				for i := range 300 {
					id := fmt.Sprint("c", r.IntN(40))
					switch r.IntN(7) {
					case 0, 1:
						p := pol
						if r.IntN(2) == 0 {
							p.Interval = 3 * time.Second
						}
						mu.Lock() // hold so the new target's first probe cannot see the old mark
						if err := m.Add(Target{ID: id, Prober: prober(id, r.IntN(4)), Policy: p}); err == nil {
							delete(removed, id)
						}
						mu.Unlock()
					case 2:
						mu.Lock() // hold so a concurrent Add cannot revive the ID between Remove and the mark
						if m.Remove(id) == nil {
							removed[id] = true
						}
						mu.Unlock()
					case 3:
						_ = m.Update(Target{ID: id, Prober: prober(id, r.IntN(3)), Policy: pol})
					case 4:
						_ = m.Override(id, []State{Passing, Critical}[r.IntN(2)])
					case 5:
						_ = m.SetDisabled(id, r.IntN(2) == 0)
					case 6:
						if i%10 == 0 {
							m.Snapshot()
						}
					}
					time.Sleep(time.Duration(r.IntN(500)) * time.Millisecond)
				}
			})
		}
		wg.Wait()
		time.Sleep(10 * time.Second)
		stop()
		assert.Zero(t, late.Load(), "probes started after Remove returned")
		assert.Zero(t, gaps, "event sequence gaps")
		assert.Positive(t, seq, "some events")
		for _, st := range m.Snapshot() {
			assert.False(t, st.InFlight, st.ID)
		}
	})
}
