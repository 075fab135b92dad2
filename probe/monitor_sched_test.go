package probe

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// monEnvoyEdges is the Envoy preset with distinct unhealthy and edge
// intervals (docs/semantics.md, Envoy rule 9) and two passes needed after the
// first, so every interval of the schedule shows up.
func monEnvoyEdges() Policy {
	p := Envoy()
	p.UnhealthyInterval = 10 * time.Second
	p.UnhealthyEdgeInterval = time.Second
	p.HealthyEdgeInterval = 2 * time.Second
	p.PassingThreshold = 2
	return p
}

// TestMonitorExactSchedules runs one target per case in virtual time and
// compares every probe start and every transition with the schedule the
// policy prescribes.
func TestMonitorExactSchedules(t *testing.T) {
	recovery2 := DefaultPolicy()
	recovery2.PassingThreshold = 2
	cases := []struct {
		name   string
		policy Policy
		script func(time.Duration) Status
		until  time.Duration
		probes []time.Duration
		events []monEv
	}{{
		// Record service: passing every interval; warning every interval/2;
		// critical doubling from the interval up to maxBackoff (300 s);
		// recovery every interval/2; back to the interval once passing.
		name:   "record service: warning, critical back-off to the cap, recovery, passing",
		policy: recovery2,
		script: monFailBetween(25*time.Second, 600*time.Second, Fail),
		until:  680 * time.Second,
		probes: monSecs(0, 10, 20, 30, 35, 40, 50, 70, 110, 190, 350, 650, 655, 665, 675),
		events: []monEv{
			{30 * time.Second, Passing, Warning, CauseProbe},
			{40 * time.Second, Warning, Critical, CauseProbe},
			{650 * time.Second, Critical, Recovery, CauseProbe},
			{655 * time.Second, Recovery, Passing, CauseProbe},
		},
	}, {
		name:   "record service: one failure, warning at half interval, back to interval",
		policy: DefaultPolicy(),
		script: monFailBetween(25*time.Second, 32*time.Second, Fail),
		until:  60 * time.Second,
		probes: monSecs(0, 10, 20, 30, 35, 45, 55),
		events: []monEv{
			{30 * time.Second, Passing, Warning, CauseProbe},
			{35 * time.Second, Warning, Passing, CauseProbe},
		},
	}, {
		name:   "record service: back to the interval after the first pass in critical",
		policy: DefaultPolicy(),
		script: monFailBetween(25*time.Second, 100*time.Second, Fail),
		until:  135 * time.Second,
		probes: monSecs(0, 10, 20, 30, 35, 40, 50, 70, 110, 120, 130),
		events: []monEv{
			{30 * time.Second, Passing, Warning, CauseProbe},
			{40 * time.Second, Warning, Critical, CauseProbe},
			{110 * time.Second, Critical, Passing, CauseProbe},
		},
	}, {
		name:   "record service: fail-now goes critical at once",
		policy: DefaultPolicy(),
		script: monFailBetween(15*time.Second, 25*time.Second, FailNow),
		until:  45 * time.Second,
		probes: monSecs(0, 10, 20, 30, 40),
		events: []monEv{
			{20 * time.Second, Passing, Critical, CauseProbe},
			{30 * time.Second, Critical, Passing, CauseProbe},
		},
	}, {
		// Envoy preset: starts unhealthy, first pass immediate, every
		// interval (edges default to the interval), no back-off.
		name:   "envoy preset: every interval",
		policy: Envoy(),
		script: monFailBetween(10*time.Second, 30*time.Second, Fail),
		until:  38 * time.Second,
		probes: monSecs(0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36),
		events: []monEv{
			{0, Critical, Passing, CauseProbe},
			{12 * time.Second, Passing, Warning, CauseProbe},
			{18 * time.Second, Warning, Critical, CauseProbe},
			{30 * time.Second, Critical, Passing, CauseProbe},
		},
	}, {
		// Envoy rule 9: unhealthy-edge interval after a failure while the
		// change is pending, unhealthy interval once unhealthy, healthy-edge
		// interval after a pass while pending, interval once healthy.
		name:   "envoy preset: edge and unhealthy intervals",
		policy: monEnvoyEdges(),
		script: monFailBetween(10*time.Second, 30*time.Second, Fail),
		until:  46 * time.Second,
		probes: monSecs(0, 3, 6, 9, 12, 13, 14, 24, 34, 36, 39, 42, 45),
		events: []monEv{
			{0, Critical, Passing, CauseProbe},
			{12 * time.Second, Passing, Warning, CauseProbe},
			{14 * time.Second, Warning, Critical, CauseProbe},
			{34 * time.Second, Critical, Recovery, CauseProbe},
			{36 * time.Second, Recovery, Passing, CauseProbe},
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := monNewRec()
				m := monNew(t, rec, nil)
				require.NoError(t, m.Add(Target{ID: "t", Prober: rec.prober("t", c.script), Policy: c.policy}))
				stop := monStart(t, m)
				time.Sleep(c.until)
				stop()
				assert.Equal(t, c.probes, rec.probesOf("t"), "probe starts")
				assert.Equal(t, c.events, rec.evs("t"), "transitions")
				st, _ := m.Stats("t")
				assert.Equal(t, uint64(len(c.probes)), st.Probes)
			})
		})
	}
}

// TestMonitorJitter checks the initial and per-interval jitter stay within
// their bounds, actually vary, and repeat exactly with the same seed.
func TestMonitorJitter(t *testing.T) {
	pol := DefaultPolicy()
	pol.InitialJitter = 5 * time.Second
	pol.IntervalJitter = time.Second
	pol.IntervalJitterPercent = 10 // 1 s of 10 s
	run := func(t *testing.T, seed uint64) map[string][]time.Duration {
		out := map[string][]time.Duration{}
		synctest.Test(t, func(t *testing.T) {
			rec := monNewRec()
			m := monNew(t, rec, func(c *MonitorConfig) { c.Seed = seed; c.Concurrency = 1 })
			for i := range 20 {
				id := fmt.Sprint("j", i)
				require.NoError(t, m.Add(Target{ID: id, Prober: rec.prober(id, monAlways(Pass)), Policy: pol}))
			}
			stop := monStart(t, m)
			time.Sleep(200 * time.Second)
			stop()
			for i := range 20 {
				id := fmt.Sprint("j", i)
				out[id] = rec.probesOf(id)
			}
		})
		return out
	}
	a := run(t, 7)
	distinctFirst := map[time.Duration]bool{}
	for id, ps := range a {
		require.NotEmpty(t, ps, id)
		assert.GreaterOrEqual(t, ps[0], time.Duration(0), id)
		assert.Less(t, ps[0], 5*time.Second, "%s: initial jitter", id)
		distinctFirst[ps[0]] = true
		exact := 0
		for i := 1; i < len(ps); i++ {
			gap := ps[i] - ps[i-1]
			assert.GreaterOrEqual(t, gap, 10*time.Second, "%s gap %d", id, i)
			assert.Less(t, gap, 12*time.Second, "%s gap %d", id, i)
			if gap == 10*time.Second {
				exact++
			}
		}
		assert.Less(t, exact, len(ps)-1, "%s: jitter never applied", id)
	}
	assert.Greater(t, len(distinctFirst), 15, "initial jitter spreads the first probes")
	assert.Equal(t, a, run(t, 7), "same seed, same schedule")
	assert.NotEqual(t, a, run(t, 8), "another seed, another schedule")
}

// TestMonitorChangesWhileRunning adds, removes, updates, overrides and
// disables targets while Run runs, from the test goroutine.
func TestMonitorChangesWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := monNewRec()
		m := monNew(t, rec, nil)
		pol := DefaultPolicy()
		add := func(id string, script func(time.Duration) Status) {
			require.NoError(t, m.Add(Target{ID: id, Prober: rec.prober(id, script), Policy: pol}))
		}
		add("A", monAlways(Pass))
		add("C", monFailBetween(25*time.Second, 31*time.Second, Fail))
		add("D", monAlways(Pass))
		add("E", monAlways(Pass))
		stop := monStart(t, m)

		time.Sleep(13 * time.Second)
		require.NoError(t, m.Override("D", Critical)) // drain at 13 s
		require.NoError(t, m.SetDisabled("E", true))  // disable at 13 s

		time.Sleep(12 * time.Second) // 25 s
		add("B", monAlways(Pass))

		time.Sleep(7 * time.Second) // 32 s: C is in warning since 30 s
		slower := pol
		slower.Interval = 20 * time.Second
		require.NoError(t, m.Update(Target{ID: "C", Prober: rec.prober("C", monAlways(Pass)), Policy: slower}))

		time.Sleep(10 * time.Second) // 42 s
		require.NoError(t, m.Remove("A"))
		require.NoError(t, m.SetDisabled("E", false))

		time.Sleep(5 * time.Second) // 47 s
		require.NoError(t, m.Update(Target{ID: "B", Prober: rec.prober("B2", monAlways(Pass)), Policy: pol}))

		time.Sleep(22 * time.Second) // 69 s
		stop()

		assert.Equal(t, monSecs(0, 10, 20, 30, 40), rec.probesOf("A"), "no probe after removal")
		assert.Equal(t, monSecs(25, 35, 45), rec.probesOf("B"), "old prober not used after update")
		assert.Equal(t, monSecs(47, 57, 67), rec.probesOf("B2"), "new prober at once, then every interval")
		assert.Equal(t, monSecs(0, 10, 20, 30, 32, 52), rec.probesOf("C"), "new policy's interval after update")
		assert.Equal(t, []monEv{
			{30 * time.Second, Passing, Warning, CauseProbe},
			{32 * time.Second, Warning, Passing, CauseOverride},
		}, rec.evs("C"))
		assert.Equal(t, []monEv{
			{13 * time.Second, Passing, Critical, CauseOverride},
			{20 * time.Second, Critical, Passing, CauseProbe},
		}, rec.evs("D"), "drain reaches the machine at once; the next pass undoes it")
		assert.Equal(t, monSecs(0, 10, 20, 30, 40, 50, 60), rec.probesOf("D"), "override keeps the schedule")
		assert.Equal(t, []monEv{
			{13 * time.Second, Passing, Passing, CauseDisabled},
			{42 * time.Second, Passing, Passing, CauseDisabled},
		}, rec.evs("E"))
		var served []bool
		for _, e := range rec.eventList() {
			if e.Target == "E" {
				served = append(served, e.Served)
				assert.Equal(t, !e.Served, e.Disabled)
			}
		}
		assert.Equal(t, []bool{false, true}, served)
		_, ok := m.Stats("A")
		assert.False(t, ok)
		st, _ := m.Stats("C")
		assert.Equal(t, uint64(6), st.Probes, "statistics survive Update")
	})
}

// TestMonitorRemoveCancelsRunningProbe removes a target while its probe
// blocks: the probe's context is cancelled, its result dropped, and nothing
// is probed afterwards.
func TestMonitorRemoveCancelsRunningProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := monNewRec()
		calls := 0
		cancelled := make(chan struct{})
		p := ProberFunc(func(ctx context.Context) Result {
			calls++
			<-ctx.Done()
			close(cancelled)
			return Result{Status: Fail, Kind: KindTimeout}
		})
		pol := DefaultPolicy()
		pol.Timeout = pol.Interval
		m := monNew(t, rec, nil)
		require.NoError(t, m.Add(Target{ID: "x", Prober: p, Policy: pol}))
		stop := monStart(t, m)
		time.Sleep(time.Second)
		require.NoError(t, m.Remove("x"))
		<-cancelled
		time.Sleep(time.Minute)
		stop()
		assert.Equal(t, 1, calls)
		assert.Empty(t, rec.eventList())
	})
}

// TestMonitorEventsInOrder checks the stream's order across many targets:
// gap-free sequence numbers, non-decreasing times, and each target's
// transitions chaining From → To.
func TestMonitorEventsInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := monNewRec()
		m := monNew(t, rec, func(c *MonitorConfig) { c.Concurrency = 16 })
		pol := DefaultPolicy()
		pol.IntervalJitter = 3 * time.Second
		for i := range 200 {
			id := fmt.Sprint("t", i)
			from := time.Duration(i%13) * 7 * time.Second
			to := from + time.Duration(i%5+1)*40*time.Second
			require.NoError(t, m.Add(Target{ID: id, Prober: rec.prober(id, monFailBetween(from, to, Fail)), Policy: pol}))
		}
		stop := monStart(t, m)
		time.Sleep(20 * time.Minute)
		stop()
		evs := rec.eventList()
		require.NotEmpty(t, evs)
		last := map[string]State{}
		for i, e := range evs {
			require.Equal(t, uint64(i+1), e.Seq)
			if i > 0 {
				require.False(t, e.Transition.At.Before(evs[i-1].Transition.At), "event %d goes back in time", i)
			}
			if s, ok := last[e.Target]; ok {
				require.Equal(t, s, e.Transition.From, "target %s", e.Target)
			}
			last[e.Target] = e.Transition.To
		}
		for i := range 200 {
			assert.Equal(t, Passing, last[fmt.Sprint("t", i)], "every target recovered")
		}
	})
}
