package probe

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// monRec records, per target, when probes started (as offsets from a base
// time) and the events an observer received. Safe for concurrent use.
type monRec struct {
	base   time.Time
	mu     sync.Mutex
	probes map[string][]time.Duration
	events []Event
}

func monNewRec() *monRec {
	return &monRec{base: time.Now(), probes: make(map[string][]time.Duration)}
}

// Observe implements Observer.
func (r *monRec) Observe(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// prober returns a Prober for id whose verdict at offset d from base is
// script(d); it records the start of every probe.
func (r *monRec) prober(id string, script func(d time.Duration) Status) Prober {
	return ProberFunc(func(ctx context.Context) Result {
		d := time.Since(r.base)
		r.mu.Lock()
		r.probes[id] = append(r.probes[id], d)
		r.mu.Unlock()
		if s := script(d); s != Pass {
			return Result{Status: s, Kind: KindRefused, Detail: "scripted failure", Latency: time.Millisecond}
		}
		return Result{Status: Pass, Latency: time.Millisecond}
	})
}

func (r *monRec) probesOf(id string) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.probes[id]...)
}

func (r *monRec) eventList() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// monEv is an event reduced to what schedule tests compare.
type monEv struct {
	At       time.Duration
	From, To State
	Cause    Cause
}

func (r *monRec) evs(id string) []monEv {
	var out []monEv
	for _, e := range r.eventList() {
		if e.Target == id {
			out = append(out, monEv{e.Transition.At.Sub(r.base), e.Transition.From, e.Transition.To, e.Transition.Cause})
		}
	}
	return out
}

// monFailBetween returns a script failing with s in [from, to) and passing
// elsewhere.
func monFailBetween(from, to time.Duration, s Status) func(time.Duration) Status {
	return func(d time.Duration) Status {
		if d >= from && d < to {
			return s
		}
		return Pass
	}
}

func monAlways(s Status) func(time.Duration) Status { return func(time.Duration) Status { return s } }

// monStart runs m in the background and returns a stop function that cancels
// it and checks that Run returned nil.
func monStart(t *testing.T, m *Monitor) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	return func() {
		cancel()
		require.NoError(t, <-done)
	}
}

func monNew(t *testing.T, obs Observer, mutate func(*MonitorConfig)) *Monitor {
	t.Helper()
	cfg := DefaultMonitorConfig()
	cfg.Seed = 1
	cfg.Concurrency = 8
	if mutate != nil {
		mutate(&cfg)
	}
	m, err := NewMonitor(cfg, obs, nil)
	require.NoError(t, err)
	return m
}

func monSecs(ss ...float64) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = time.Duration(s * float64(time.Second))
	}
	return out
}

func TestMonitorConfigValidate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*MonitorConfig)
		ok     bool
	}{
		{"default", func(*MonitorConfig) {}, true},
		{"concurrency 0 takes the default", func(c *MonitorConfig) { c.Concurrency = 0 }, true},
		{"concurrency negative", func(c *MonitorConfig) { c.Concurrency = -1 }, false},
		{"concurrency too big", func(c *MonitorConfig) { c.Concurrency = MaxMonitorConcurrency + 1 }, false},
		{"window 0 takes the default", func(c *MonitorConfig) { c.LatencyWindow = 0 }, true},
		{"window negative", func(c *MonitorConfig) { c.LatencyWindow = -1 }, false},
		{"window too big", func(c *MonitorConfig) { c.LatencyWindow = MaxLatencyWindow + 1 }, false},
		{"smoothing 0 takes the default", func(c *MonitorConfig) { c.LatencySmoothing = 0 }, true},
		{"smoothing negative", func(c *MonitorConfig) { c.LatencySmoothing = -0.1 }, false},
		{"smoothing above 1", func(c *MonitorConfig) { c.LatencySmoothing = 1.5 }, false},
		{"smoothing 1", func(c *MonitorConfig) { c.LatencySmoothing = 1 }, true},
		{"shard index out of range", func(c *MonitorConfig) { c.Shard = Shard{Index: 3, Count: 3} }, false},
		{"shard count negative", func(c *MonitorConfig) { c.Shard = Shard{Count: -1} }, false},
		{"shard ok", func(c *MonitorConfig) { c.Shard = Shard{Index: 2, Count: 3} }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultMonitorConfig()
			c.mutate(&cfg)
			err := cfg.Validate()
			if c.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrMonitorConfig)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			_, err = NewMonitor(cfg, nil, nil)
			require.ErrorIs(t, err, ErrMonitorConfig)
		})
	}
}

func TestMonitorAddErrors(t *testing.T) {
	m := monNew(t, nil, func(c *MonitorConfig) { c.Shard = Shard{Index: 0, Count: 2} })
	p := ProberFunc(func(context.Context) Result { return Result{Status: Pass} })
	owned, foreign := "", ""
	for i := 0; owned == "" || foreign == ""; i++ {
		id := string(rune('a'+i%26)) + string(rune('a'+i/26))
		if m.Owns(id) {
			owned = id
		} else {
			foreign = id
		}
	}
	bad := DefaultPolicy()
	bad.CriticalThreshold = -1
	cases := []struct {
		name string
		t    Target
		want error
	}{
		{"empty id", Target{Prober: p, Policy: DefaultPolicy()}, ErrMonitorConfig},
		{"nil prober", Target{ID: owned, Policy: DefaultPolicy()}, ErrMonitorConfig},
		{"bad policy", Target{ID: owned, Prober: p, Policy: bad}, ErrInvalidPolicy},
		{"other shard", Target{ID: foreign, Prober: p, Policy: DefaultPolicy()}, ErrNotInShard},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := m.Add(c.t)
			require.Error(t, err)
			if c.want != nil {
				require.ErrorIs(t, err, c.want)
			}
			if c.want == ErrMonitorConfig {
				var fe *FieldError
				require.ErrorAs(t, err, &fe)
			}
		})
	}
	assert.EqualError(t, m.Add(Target{Prober: p}), `probe: invalid monitor config: targets[""].id = "": allowed a non-empty string`)
	assert.EqualError(t, m.Add(Target{ID: owned}), `probe: invalid monitor config: targets["`+owned+`"].prober = <nil>: allowed a non-nil Prober`)
	require.NoError(t, m.Add(Target{ID: owned, Prober: p, Policy: DefaultPolicy()}))
	require.ErrorIs(t, m.Add(Target{ID: owned, Prober: p, Policy: DefaultPolicy()}), ErrTargetExists)
	require.ErrorIs(t, m.Remove("nope"), ErrUnknownTarget)
	require.ErrorIs(t, m.Override("nope", Critical), ErrUnknownTarget)
	require.ErrorIs(t, m.SetDisabled("nope", true), ErrUnknownTarget)
	require.ErrorIs(t, m.Update(Target{ID: "nope", Prober: p, Policy: DefaultPolicy()}), ErrUnknownTarget)
	assert.EqualError(t, m.Override(owned, Warning), `probe: override to warning: allowed one of "passing", "critical"`)
	require.Equal(t, 1, m.Len())
}

func TestMonitorRunTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := monNew(t, nil, nil)
		stop := monStart(t, m)
		synctest.Wait()
		require.ErrorIs(t, m.Run(context.Background()), ErrMonitorRunning)
		stop()
		// A second Run after the first returned works.
		stop = monStart(t, m)
		stop()
	})
}

func TestMonitorConcurrencyBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		running, peak, total := 0, 0, 0
		slow := ProberFunc(func(ctx context.Context) Result {
			mu.Lock()
			running++
			total++
			peak = max(peak, running)
			mu.Unlock()
			time.Sleep(200 * time.Millisecond)
			mu.Lock()
			running--
			mu.Unlock()
			return Result{Status: Pass}
		})
		m := monNew(t, nil, func(c *MonitorConfig) { c.Concurrency = 3 })
		for i := range 30 {
			require.NoError(t, m.Add(Target{ID: string(rune('A' + i)), Prober: slow, Policy: DefaultPolicy()}))
		}
		stop := monStart(t, m)
		time.Sleep(5 * time.Second) // 30 probes × 200 ms over 3 workers: 2 s
		stop()
		assert.Equal(t, 3, peak)
		assert.Equal(t, 30, total, "every target probed once in the first interval")
	})
}

func TestMonitorProberPanicIsFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := monNewRec()
		m := monNew(t, rec, nil)
		require.NoError(t, m.Add(Target{ID: "p", Prober: ProberFunc(func(context.Context) Result { panic("boom") }), Policy: DefaultPolicy()}))
		stop := monStart(t, m)
		time.Sleep(time.Second)
		stop()
		st, ok := m.Stats("p")
		require.True(t, ok)
		assert.Equal(t, uint64(1), st.Failures)
		assert.Equal(t, uint64(1), st.FailuresByKind[KindOther])
		assert.Contains(t, st.LastError, "boom")
		assert.Equal(t, Warning, st.State)
	})
}

func TestMonitorStopCancelsRunningProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{})
		p := ProberFunc(func(ctx context.Context) Result {
			close(started)
			<-ctx.Done()
			return Result{Status: Fail, Kind: KindTimeout}
		})
		pol := DefaultPolicy()
		pol.Timeout = pol.Interval
		m := monNew(t, nil, nil)
		require.NoError(t, m.Add(Target{ID: "x", Prober: p, Policy: pol}))
		stop := monStart(t, m)
		<-started
		stop() // must not wait for the 10 s timeout; the cut-short result is dropped
		st, _ := m.Stats("x")
		assert.Equal(t, uint64(0), st.Probes)
		assert.Equal(t, Passing, st.State)
		assert.False(t, st.InFlight)
	})
}

func TestMonitorErrorsAreMatchable(t *testing.T) {
	m := monNew(t, nil, nil)
	err := m.Remove("x")
	assert.True(t, errors.Is(err, ErrUnknownTarget))
	assert.Contains(t, err.Error(), `"x"`)
}
