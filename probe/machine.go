package probe

import (
	"time"
)

// machCap bounds the machine's counters so they never overflow; every
// threshold is far below it.
const machCap int32 = 1 << 30

// Step is what a Machine returns for each input: whether the state (or the
// disabled flag) changed, the transition if so, and the base delay to the
// next probe.
type Step struct {
	// Changed reports whether the target's state or disabled flag changed.
	Changed bool
	// Transition describes the change; valid only when Changed. For
	// SetDisabled, From and To are both the current state and Cause is
	// CauseDisabled.
	Transition Transition
	// Next is the base delay, without jitter, from the start of the probe
	// whose result this step observed to the start of the next probe; the
	// Monitor adds jitter (up to Policy.MaxJitter), and probes at once if the result arrived
	// later than that. For Override and SetDisabled it is the delay the
	// schedule gives the current state; the Monitor may keep its timer.
	// Never less than MinInterval.
	Next time.Duration
}

// Machine is the per-target health state machine: passing, warning,
// critical and recovery, plus a separate disabled flag.
//
// It is a pure value: no goroutines, locks, callbacks or clock reads. The
// caller passes the time of each input, which is only stamped on
// transitions, so time going backwards is harmless. A Machine is not safe
// for concurrent use; the Monitor owns each machine from one goroutine.
// Copying a Machine (*m2 = *m) yields an independent machine. Use
// NewMachine: the zero Machine has no policy; it never panics, but stays
// Unknown and is never served.
//
// Counting rules (Policy fields in parentheses):
//   - A success adds to the success count; once that count reaches
//     FailureResetThreshold the failure count is reset to 0.
//   - A failure adds to the failure count and resets the success count.
//     Results whose Status is neither Pass nor FailNow count as failures.
//   - FailNow moves the target straight to critical (its failure count
//     is raised to CriticalThreshold), unless FailNowAsFailure, when it
//     is an ordinary failure.
//   - passing → warning when failures ≥ WarningThreshold; passing or
//     warning → critical when failures ≥ CriticalThreshold.
//   - warning → passing when successes ≥ WarningExitThreshold.
//   - critical → passing when successes ≥ PassingThreshold, else
//     critical → recovery on the first success; recovery → passing when
//     successes ≥ PassingThreshold; recovery → critical on any failure.
//     Entering passing from critical or recovery resets the failure count.
//   - With FirstPassImmediate, a success as the very first input (no
//     result or override seen yet) moves the target to passing at once.
//   - A local failure (Kind KindLocal, whatever its Status) is not
//     counted: Observe leaves the machine as it was (state, counters,
//     back-off, the first-input flag) and returns no change, with Next the
//     delay of the last step, so the target is probed again on its
//     normal schedule.
type Machine struct {
	// p is never modified once the machine is made, so machines (and their
	// copies) may share it: a Monitor gives every target with the same
	// policy the same one. nil in the zero Machine.
	p         *Policy
	next      time.Duration
	fails     int32 // consecutive failures (reset per FailureResetThreshold)
	succ      int32 // consecutive successes
	critFails int32 // consecutive failures seen in critical (back-off)
	state     State
	seen      bool
	disabled  bool
}

// NewMachine validates p and returns a machine in p.InitialState with no
// result seen. The machine keeps its own copy of p, with the defaults of
// its zero fields filled in.
func NewMachine(p Policy) (*Machine, error) {
	if err := machValidate(p); err != nil {
		return nil, err
	}
	p = p.withDefaults()
	// One allocation for the machine and its policy.
	both := &struct {
		m Machine
		p Policy
	}{p: p}
	both.m.init(&both.p)
	return &both.m, nil
}

// machValidate is NewMachine's check of p.
func machValidate(p Policy) error {
	return p.Validate()
}

// init readies m for p in p.InitialState with no result seen.
func (m *Machine) init(p *Policy) {
	*m = Machine{p: p, state: p.InitialState}
	m.next = p.machDelay(m.state, m.state == Passing, 0)
}

// policy returns the machine's policy, the zero Policy for the zero Machine.
func (m *Machine) policy() *Policy {
	if m.p == nil {
		return &Policy{}
	}
	return m.p
}

// State returns the current state (never Unknown).
func (m *Machine) State() State { return m.state }

// Served reports whether the target receives traffic: its state is passing
// or warning and it is not disabled.
func (m *Machine) Served() bool { return m.state.Served() && !m.disabled }

// Disabled reports whether the disabled flag is set.
func (m *Machine) Disabled() bool { return m.disabled }

// Policy returns a copy of the machine's policy.
func (m *Machine) Policy() Policy { return *m.policy() }

// Next returns the base delay the last step returned (before any step: the
// schedule's delay for the initial state).
func (m *Machine) Next() time.Duration { return m.next }

func machInc(n int32) int32 {
	if n < machCap {
		return n + 1
	}
	return n
}

// Observe feeds one probe result taken at now and returns the step. It is
// pure, allocation-free and constant-time.
func (m *Machine) Observe(now time.Time, r Result) Step {
	if r.Kind == KindLocal {
		return Step{Next: m.next}
	}
	from := m.state
	first := !m.seen
	m.seen = true
	p := m.policy()
	passed := r.Status == Pass
	if passed {
		m.succ = machInc(m.succ)
		if int(m.succ) >= p.FailureResetThreshold {
			m.fails = 0
		}
		m.critFails = 0
		switch m.state {
		case Warning:
			if int(m.succ) >= p.WarningExitThreshold {
				m.state = Passing
			}
		case Critical, Recovery:
			if (first && p.FirstPassImmediate) || int(m.succ) >= p.PassingThreshold {
				m.state = Passing
				m.fails = 0
			} else {
				m.state = Recovery
			}
		}
	} else {
		m.succ = 0
		m.fails = machInc(m.fails)
		if r.Status == FailNow && !p.FailNowAsFailure && int(m.fails) < p.CriticalThreshold {
			m.fails = int32(p.CriticalThreshold)
		}
		switch m.state {
		case Passing, Warning:
			if int(m.fails) >= p.CriticalThreshold {
				m.state = Critical
			} else if int(m.fails) >= p.WarningThreshold {
				m.state = Warning
			}
		case Recovery:
			m.state = Critical
		}
		if m.state == Critical {
			m.critFails = machInc(m.critFails)
		}
	}
	m.next = p.machDelay(m.state, passed, int(m.critFails))
	st := Step{Next: m.next}
	if m.state != from {
		st.Changed = true
		st.Transition = Transition{From: from, To: m.state, At: now, Cause: CauseProbe, Result: r}
	}
	return st
}

// Override forces the target to Critical (drain) or Passing (force) at
// now. It is not permanent: the following results move the target by the
// normal rules, as if it had just reached that state by probing:
//   - to Critical: failure count = CriticalThreshold, success count 0, the
//     back-off starts again at Interval;
//   - to Passing: failure count 0, success count = PassingThreshold.
//
// An override counts as the first input, so FirstPassImmediate no longer
// applies after it. Overriding to the current state resets the counters
// the same way and reports no change. Any other target state (Warning,
// Recovery, Unknown) is ignored: the machine is unchanged and the step
// reports no change. Next is the schedule's delay for the new state; the
// Monitor may keep its current timer instead.
func (m *Machine) Override(now time.Time, to State) Step {
	p := m.policy()
	if (to != Passing && to != Critical) || p.Interval == 0 {
		return Step{Next: m.next} // not a target state, or the zero Machine
	}
	from := m.state
	m.seen = true
	m.state = to
	m.critFails = 0
	if to == Critical {
		m.fails, m.succ = int32(p.CriticalThreshold), 0
	} else {
		m.fails, m.succ = 0, int32(p.PassingThreshold)
	}
	m.next = p.machDelay(to, to == Passing, 0)
	st := Step{Next: m.next}
	if from != to {
		st.Changed = true
		st.Transition = Transition{From: from, To: to, At: now, Cause: CauseOverride}
	}
	return st
}

// SetDisabled sets or clears the permanent disabled flag at now. A
// disabled target keeps being probed and keeps its state, but is not
// served until the flag is cleared. The step reports a change (From = To =
// the current state, Cause CauseDisabled) only when the flag flips; Next is
// the delay of the last step, unchanged.
func (m *Machine) SetDisabled(now time.Time, disabled bool) Step {
	st := Step{Next: m.next}
	if m.disabled == disabled {
		return st
	}
	m.disabled = disabled
	st.Changed = true
	st.Transition = Transition{From: m.state, To: m.state, At: now, Cause: CauseDisabled}
	return st
}
