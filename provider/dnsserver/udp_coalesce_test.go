package dnsserver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// coalesceSim drives a udpCoalescer as the UDP loop does: a batch of
// size queries every gap, each query costing cost(paused) of CPU, where
// paused is whether the coalescer asked for a pause after the batch
// before.
type coalesceSim struct {
	c      udpCoalescer
	now    time.Time
	used   time.Duration
	good   bool
	reads  int
	trials []bool // the choices of the trials that ended
	paused bool
	cost   func(paused bool) time.Duration
}

func newCoalesceSim(delay time.Duration, cost func(bool) time.Duration) *coalesceSim {
	s := &coalesceSim{now: time.Unix(1000, 0), good: true, cost: cost}
	s.c = newUDPCoalescer(delay, 60000, func() (time.Duration, bool) {
		s.reads++
		return s.used, s.good
	}, func(pause bool) { s.trials = append(s.trials, pause) })
	return s
}

// run sends batches of size every gap for d and returns the share of
// batches after which the coalescer paused.
func (s *coalesceSim) run(d, gap time.Duration, size int) float64 {
	batches, pauses := 0, 0
	for end := s.now.Add(d); s.now.Before(end); s.now = s.now.Add(gap) {
		s.used += time.Duration(size) * s.cost(s.paused)
		p := s.c.after(size, s.now)
		s.paused = p > 0
		if s.paused {
			require.Equal(nil, s.c.delay, p)
		}
		batches++
		if s.paused {
			pauses++
		}
	}
	return float64(pauses) / float64(batches)
}

const (
	simDelay = 60 * time.Microsecond
	fast     = 100 * time.Microsecond // 8 per 100 µs: 80,000 queries/s
	slow     = time.Millisecond       // 8 per ms: 8,000 queries/s
	trial    = time.Duration(len(tuneOrder)) * tunePhase
)

func costs(off, on time.Duration) func(bool) time.Duration {
	return func(paused bool) time.Duration {
		if paused {
			return on
		}
		return off
	}
}

// TestUDPCoalescerPausesOnlyWhereItSaves: above the rate threshold the loop
// tries pausing and not pausing in alternate phases and keeps pausing only
// where that costs clearly less CPU per query; a machine where a pause
// costs more than it saves (a virtual machine with dear timers) never
// pauses after the trial. Below the threshold nothing pauses and the CPU
// clock is never read.
func TestUDPCoalescerPausesOnlyWhereItSaves(t *testing.T) {
	t.Run("pausing saves", func(t *testing.T) {
		s := newCoalesceSim(simDelay, costs(5*time.Microsecond, 4*time.Microsecond))
		share := s.run(trial+2*time.Millisecond, fast, 8)
		assert.InDelta(t, 0.5, share, 0.05, "half the trial pauses")
		assert.Equal(t, 1.0, s.run(time.Second, fast, 8), "after the trial, every batch")
		assert.Equal(t, []bool{true}, s.trials)
	})
	t.Run("pausing costs more", func(t *testing.T) {
		s := newCoalesceSim(simDelay, costs(5*time.Microsecond, 6*time.Microsecond))
		s.run(trial+2*time.Millisecond, fast, 8)
		assert.Zero(t, s.run(time.Second, fast, 8), "never after the trial")
		assert.Equal(t, []bool{false}, s.trials)
	})
	t.Run("a small saving goes to not pausing", func(t *testing.T) {
		// A pause adds latency: 7 % cheaper is not worth it (the margin is
		// 10 %), nor is noise of that size.
		s := newCoalesceSim(simDelay, costs(5000*time.Nanosecond, 4650*time.Nanosecond))
		s.run(trial+2*time.Millisecond, fast, 8)
		assert.Zero(t, s.run(time.Second, fast, 8))
	})
	t.Run("below the rate", func(t *testing.T) {
		s := newCoalesceSim(simDelay, costs(5*time.Microsecond, time.Microsecond))
		assert.Zero(t, s.run(10*time.Second, slow, 8))
		assert.Zero(t, s.reads, "the CPU clock is not read below the rate")
		assert.Empty(t, s.trials)
	})
	t.Run("pause off", func(t *testing.T) {
		s := newCoalesceSim(0, costs(5*time.Microsecond, time.Microsecond))
		assert.Zero(t, s.run(10*time.Second, fast, 8))
		assert.Zero(t, s.reads)
	})
}

// TestUDPCoalescerTrialRules: the trial's phases follow tuneOrder; a dip
// below the rate starts it over; a choice stands for tuneHold and is then
// tried again (so a machine whose costs change is followed); phases whose
// CPU readings are not good are left out, and a trial with no good phase
// of one mode chooses not to pause.
func TestUDPCoalescerTrialRules(t *testing.T) {
	t.Run("phases", func(t *testing.T) {
		s := newCoalesceSim(simDelay, costs(5*time.Microsecond, 4*time.Microsecond))
		s.run(2*time.Millisecond, fast, 8) // the first window closes above the rate
		for i, want := range tuneOrder {
			share := s.run(tunePhase, fast, 8)
			// A phase's edge falls between batches: one batch may
			// belong to the next phase.
			if want {
				assert.GreaterOrEqual(t, share, 0.9, "phase %d pauses", i)
			} else {
				assert.LessOrEqual(t, share, 0.1, "phase %d does not", i)
			}
		}
	})
	t.Run("a dip starts the trial over", func(t *testing.T) {
		s := newCoalesceSim(simDelay, costs(5*time.Microsecond, 4*time.Microsecond))
		s.run(trial/2, fast, 8)
		s.run(5*time.Millisecond, slow, 8)
		assert.InDelta(t, 0, s.run(tunePhase-time.Millisecond, fast, 8), 0.1, "phase 0 again: not pausing")
		s.run(trial, fast, 8)
		assert.Equal(t, 1.0, s.run(time.Second, fast, 8))
	})
	t.Run("a choice is tried again", func(t *testing.T) {
		cost := costs(5*time.Microsecond, 4*time.Microsecond)
		s := newCoalesceSim(simDelay, func(p bool) time.Duration { return cost(p) })
		s.run(trial+2*time.Millisecond, fast, 8)
		assert.Equal(t, 1.0, s.run(tuneHold-trial-10*time.Millisecond, fast, 8), "the choice stands")
		cost = costs(5*time.Microsecond, 7*time.Microsecond) // the machine changed
		s.run(2*trial, fast, 8)                              // the hold ends within the first trial's length
		assert.Zero(t, s.run(time.Second, fast, 8), "the next trial follows it")
		assert.Equal(t, []bool{true, false}, s.trials)
	})
	t.Run("bad readings are left out", func(t *testing.T) {
		s := newCoalesceSim(simDelay, costs(5*time.Microsecond, 4*time.Microsecond))
		s.good = false
		s.run(trial+2*time.Millisecond, fast, 8)
		assert.Zero(t, s.run(time.Second, fast, 8), "no good phase: no pause")
	})
	t.Run("readings above the time passed are left out", func(t *testing.T) {
		// A clock read on another thread can jump: a phase that claims
		// more CPU than wall time is not counted. Here every paused
		// phase's reading is absurd, so pausing is never measured.
		s := newCoalesceSim(simDelay, costs(5*time.Microsecond, time.Second))
		s.run(trial+2*time.Millisecond, fast, 8)
		assert.Zero(t, s.run(time.Second, fast, 8))
	})
}

// TestUDPCoalescerArms: the loop's CPU count is armed when the rate is
// crossed upwards, before the first reading, and disarmed when it falls
// below; below the rate it is never armed, so the loop spends no system
// call on it.
func TestUDPCoalescerArms(t *testing.T) {
	s := newCoalesceSim(simDelay, costs(time.Microsecond, time.Microsecond))
	var armed []bool
	s.c.arm = func(on bool) {
		if on {
			assert.Zero(t, s.reads, "armed before the first reading")
		}
		armed = append(armed, on)
	}
	s.run(50*time.Millisecond, slow, 8)
	assert.Empty(t, armed, "below the rate")
	s.run(5*time.Millisecond, fast, 8)
	assert.Equal(t, []bool{true}, armed)
	assert.Positive(t, s.reads, "a trial began")
	s.run(5*time.Millisecond, slow, 8)
	assert.Equal(t, []bool{true, false}, armed)
}
