package probe

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// monScenarioTarget is one target of the hour-long scenario: its policy and
// its scripted verdicts.
type monScenarioTarget struct {
	id     string
	policy Policy
	script func(time.Duration) Status
}

func monScenario(n int) []monScenarioTarget {
	out := make([]monScenarioTarget, n)
	for i := range out {
		p := DefaultPolicy()
		p.Interval = time.Duration(10+i%7) * time.Second
		p.PassingThreshold = 1 + i%3
		script := monAlways(Pass)
		switch {
		case i%8 == 0: // an outage answered wrongly: fail-now
			from := time.Duration(i*37%1800) * time.Second
			script = monFailBetween(from, from+time.Duration(i%5+1)*2*time.Minute, FailNow)
		case i%4 == 0: // an outage of 2–10 minutes
			from := time.Duration(i*37%1800) * time.Second
			script = monFailBetween(from, from+time.Duration(i%5+1)*2*time.Minute, Fail)
		case i%10 == 3: // flapping every 25 s
			script = func(d time.Duration) Status {
				if (d/(25*time.Second))%2 == 1 {
					return Fail
				}
				return Pass
			}
		case i%50 == 7: // dead all along
			script = monAlways(Fail)
		}
		out[i] = monScenarioTarget{id: fmt.Sprintf("target-%04d", i), policy: p, script: script}
	}
	return out
}

// monExpected computes, from the machine alone, the probe starts and
// transitions a target must see until end with no jitter: each probe starts
// the machine's Step.Next after the previous one.
func monExpected(t *testing.T, st monScenarioTarget, end time.Duration) ([]time.Duration, []monEv) {
	m, err := NewMachine(st.policy)
	require.NoError(t, err)
	base := time.Unix(0, 0)
	var probes []time.Duration
	var evs []monEv
	for d := time.Duration(0); d < end; {
		probes = append(probes, d)
		r := Result{Status: st.script(d)}
		s := m.Observe(base.Add(d), r)
		if s.Changed {
			evs = append(evs, monEv{d, s.Transition.From, s.Transition.To, s.Transition.Cause})
		}
		d += max(s.Next, monMinDelay)
	}
	return probes, evs
}

// TestMonitorHourScenario runs 1,000 targets for one virtual hour, some
// failing on a script, and checks every target's probe starts (so its probe
// count) and transition times against the schedule its machine prescribes.
func TestMonitorHourScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("long scenario")
	}
	const n = 1000
	const end = time.Hour + 250*time.Millisecond // off the half-second grid of every schedule
	targets := monScenario(n)
	real := time.Now()
	synctest.Test(t, func(t *testing.T) {
		rec := monNewRec()
		m := monNew(t, rec, func(c *MonitorConfig) { c.Concurrency = 64 })
		for _, st := range targets {
			require.NoError(t, m.Add(Target{ID: st.id, Prober: rec.prober(st.id, st.script), Policy: st.policy}))
		}
		stop := monStart(t, m)
		time.Sleep(end)
		stop()

		total, transitions := 0, 0
		for _, st := range targets {
			wantProbes, wantEvs := monExpected(t, st, end)
			got := rec.probesOf(st.id)
			require.Equal(t, len(wantProbes), len(got), "%s: probe count", st.id)
			require.Equal(t, wantProbes, got, "%s: probe starts", st.id)
			require.Equal(t, wantEvs, rec.evs(st.id), "%s: transitions", st.id)
			total += len(got)
			transitions += len(wantEvs)
		}
		t.Logf("%d targets, %d probes, %d transitions in one virtual hour", n, total, transitions)
	})
	t.Logf("real time taken: %v (reported, not asserted)", time.Since(real))
}
