package probe

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// machGenPolicy draws a random valid policy with small thresholds.
func machGenPolicy(t *rapid.T) Policy {
	p := DefaultPolicy()
	ms := func(label string, lo, hi int) time.Duration {
		return (time.Duration(rapid.IntRange(lo, hi).Draw(t, label)) * time.Millisecond)
	}
	p.Interval = ms("interval", 1, 20000)
	p.Timeout = (time.Duration(rapid.IntRange(1, int(p.Interval/time.Millisecond)).Draw(t, "timeoutMs")) * time.Millisecond)
	p.CriticalThreshold = rapid.IntRange(1, 6).Draw(t, "critical")
	p.WarningThreshold = rapid.IntRange(1, p.CriticalThreshold).Draw(t, "warning")
	p.PassingThreshold = rapid.IntRange(1, 5).Draw(t, "passing")
	p.WarningExitThreshold = rapid.IntRange(1, 4).Draw(t, "warningExit")
	p.FailureResetThreshold = rapid.IntRange(1, 4).Draw(t, "failureReset")
	p.InitialState = rapid.SampledFrom([]State{Passing, Critical}).Draw(t, "initial")
	p.FirstPassImmediate = rapid.Bool().Draw(t, "firstPassImmediate")
	p.FailNowAsFailure = rapid.Bool().Draw(t, "failNowAsFailure")
	p.Schedule = rapid.SampledFrom([]ScheduleKind{ScheduleRecordService, ScheduleEnvoy}).Draw(t, "schedule")
	p.MaxBackoff = p.Interval + ms("extraBackoff", 0, 100000)
	opt := func(label string) time.Duration {
		if rapid.Bool().Draw(t, label+"Set") {
			return ms(label, 1, 20000)
		}
		return 0
	}
	p.UnhealthyInterval = opt("unhealthyInterval")
	p.UnhealthyEdgeInterval = opt("unhealthyEdgeInterval")
	p.HealthyEdgeInterval = opt("healthyEdgeInterval")
	p.IntervalJitter = ms("intervalJitter", 0, 2000)
	p.IntervalJitterPercent = float64(rapid.IntRange(0, 100).Draw(t, "jitterPercent"))
	if err := p.Validate(); err != nil {
		t.Fatalf("generated an invalid policy: %v", err)
	}
	return p
}

// machRef is an independent reference model of the machine, written from
// docs/semantics.md (the state machine) in other terms: "up" is the served side (passing or
// warning), "down" the other (critical or recovery, told apart by whether
// a success has been seen since going down).
type machRef struct {
	p        Policy
	up, warn bool
	fails    int
	succ     int
	downRun  int // consecutive failures while down
	seen     bool
	disabled bool
	next     time.Duration
}

func machNewRef(p Policy) *machRef {
	r := &machRef{p: p, up: p.InitialState == Passing}
	r.next = r.delay(r.up)
	return r
}

func (r *machRef) state() State {
	switch {
	case r.up && r.warn:
		return Warning
	case r.up:
		return Passing
	case r.succ > 0:
		return Recovery
	}
	return Critical
}

func (r *machRef) served() bool { return r.up && !r.disabled }

func (r *machRef) delay(passed bool) time.Duration {
	or := func(d time.Duration) time.Duration {
		if d == 0 {
			return r.p.Interval
		}
		return d
	}
	var d time.Duration
	if r.p.Schedule == ScheduleEnvoy {
		switch {
		case passed && r.up:
			d = r.p.Interval
		case passed && r.state() == Recovery:
			d = or(r.p.HealthyEdgeInterval)
		case !passed && r.up:
			d = or(r.p.UnhealthyEdgeInterval)
		default:
			d = or(r.p.UnhealthyInterval)
		}
	} else {
		switch r.state() {
		case Passing:
			d = r.p.Interval
		case Warning, Recovery:
			d = r.p.Interval / 2
		default:
			d = r.p.Interval
			for i := 1; i < r.downRun && d < r.p.MaxBackoff; i++ {
				d *= 2
			}
			d = min(d, r.p.MaxBackoff)
		}
	}
	return max(d, time.Millisecond)
}

func (r *machRef) observe(res Result) {
	first := !r.seen
	r.seen = true
	if res.Status == Pass {
		r.succ++
		r.downRun = 0
		if r.succ >= r.p.FailureResetThreshold {
			r.fails = 0
		}
		if r.up {
			if r.warn && r.succ >= r.p.WarningExitThreshold {
				r.warn = false
			}
		} else if (first && r.p.FirstPassImmediate) || r.succ >= r.p.PassingThreshold {
			r.up, r.warn, r.fails = true, false, 0
		}
		r.next = r.delay(true)
		return
	}
	r.succ = 0
	r.fails++
	if res.Status == FailNow && !r.p.FailNowAsFailure {
		r.fails = max(r.fails, r.p.CriticalThreshold)
	}
	if r.up {
		if r.fails >= r.p.CriticalThreshold {
			r.up, r.warn, r.downRun = false, false, 1
		} else if r.fails >= r.p.WarningThreshold {
			r.warn = true
		}
	} else {
		r.downRun++
	}
	r.next = r.delay(false)
}

func (r *machRef) override(to State) {
	if to != Passing && to != Critical {
		return
	}
	r.seen, r.warn, r.downRun = true, false, 0
	if to == Critical {
		r.up, r.fails, r.succ = false, r.p.CriticalThreshold, 0
		r.next = r.delay(false)
	} else {
		r.up, r.fails, r.succ = true, 0, r.p.PassingThreshold
		r.next = r.delay(true)
	}
}

func TestMachineMatchesReferenceModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := machGenPolicy(t)
		m, err := NewMachine(p)
		if err != nil {
			t.Fatal(err)
		}
		ref := machNewRef(p)
		now := machT0
		n := rapid.IntRange(1, 80).Draw(t, "steps")
		for i := 0; i < n; i++ {
			now = now.Add(time.Second)
			before, beforeDisabled := ref.state(), ref.disabled
			var st Step
			switch op := rapid.IntRange(0, 19).Draw(t, "op"); {
			case op < 17:
				res := Result{Status: rapid.SampledFrom([]Status{Pass, Pass, Fail, Fail, FailNow, 0, 9}).Draw(t, "status")}
				st = m.Observe(now, res)
				ref.observe(res)
			case op < 19:
				to := rapid.SampledFrom([]State{Passing, Critical, Warning, Recovery, Unknown}).Draw(t, "override")
				st = m.Override(now, to)
				ref.override(to)
			default:
				d := rapid.Bool().Draw(t, "disabled")
				st = m.SetDisabled(now, d)
				ref.disabled = d
			}
			if m.State() != ref.state() {
				t.Fatalf("step %d: state %v, reference %v", i, m.State(), ref.state())
			}
			if m.Served() != ref.served() {
				t.Fatalf("step %d: served %v, reference %v", i, m.Served(), ref.served())
			}
			if m.Disabled() != ref.disabled {
				t.Fatalf("step %d: disabled %v, reference %v", i, m.Disabled(), ref.disabled)
			}
			if st.Next != ref.next {
				t.Fatalf("step %d: next %v, reference %v (state %v)", i, st.Next, ref.next, m.State())
			}
			wantChanged := before != ref.state() || beforeDisabled != ref.disabled
			if st.Changed != wantChanged {
				t.Fatalf("step %d: changed %v, reference %v", i, st.Changed, wantChanged)
			}
			if st.Changed && (st.Transition.To != ref.state() || st.Transition.From != before || !st.Transition.At.Equal(now)) {
				t.Fatalf("step %d: transition %+v, reference %v → %v", i, st.Transition, before, ref.state())
			}
		}
	})
}

// Invariant: a served target never becomes unserved without at least
// criticalThreshold consecutive failures, unless a fail-now is honoured,
// and an unserved one never becomes served without passingThreshold
// consecutive successes, except by the startup rule.
func TestMachineNoFlappingBeyondThresholds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := machGenPolicy(t)
		m, err := NewMachine(p)
		if err != nil {
			t.Fatal(err)
		}
		runF, runP, first := 0, 0, true
		n := rapid.IntRange(1, 100).Draw(t, "steps")
		for i := 0; i < n; i++ {
			res := Result{Status: rapid.SampledFrom([]Status{Pass, Fail, FailNow}).Draw(t, "status")}
			was := m.Served()
			m.Observe(machT0, res)
			if res.Passed() {
				runP, runF = runP+1, 0
			} else {
				runP, runF = 0, runF+1
			}
			honoured := res.Status == FailNow && !p.FailNowAsFailure
			if was && !m.Served() && !honoured && runF < p.CriticalThreshold && p.FailureResetThreshold == 1 {
				t.Fatalf("step %d: unserved after %d failures (critical %d)", i, runF, p.CriticalThreshold)
			}
			if !was && m.Served() && !(first && p.FirstPassImmediate) && runP < p.PassingThreshold {
				t.Fatalf("step %d: served after %d successes (passing %d)", i, runP, p.PassingThreshold)
			}
			first = false
		}
	})
}
