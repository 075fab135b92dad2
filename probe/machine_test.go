package probe

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var machT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// machResult turns one letter into a result: P pass, F fail, N fail-now,
// ? an invalid status.
func machResult(c byte) Result {
	switch c {
	case 'P':
		return Result{Status: Pass}
	case 'F':
		return Result{Status: Fail, Kind: KindTimeout}
	case 'N':
		return Result{Status: FailNow, Kind: KindStatus, Code: 503}
	}
	return Result{}
}

// machRun feeds seq to a new machine for p and returns the state after
// each result, written as letters: p passing, w warning, c critical,
// r recovery. Spaces in seq are ignored.
func machRun(t *testing.T, p Policy, seq string) string {
	t.Helper()
	m, err := NewMachine(p)
	require.NoError(t, err)
	return machFeed(m, seq)
}

func machFeed(m *Machine, seq string) string {
	out := make([]byte, 0, len(seq))
	now := machT0
	for i := 0; i < len(seq); i++ {
		if seq[i] == ' ' {
			continue
		}
		now = now.Add(time.Second)
		m.Observe(now, machResult(seq[i]))
		out = append(out, "?pwcr"[m.State()])
	}
	return string(out)
}

func machPolicy(mod func(*Policy)) Policy {
	p := DefaultPolicy()
	if mod != nil {
		mod(&p)
	}
	return p
}

func TestMachineRules(t *testing.T) {
	cases := []struct {
		name string
		p    Policy
		seq  string
		want string
	}{
		{"warning threshold moves passing to warning", machPolicy(func(p *Policy) { p.WarningThreshold = 2; p.CriticalThreshold = 4 }), "FFFF", "pwwc"},
		{"critical threshold moves warning to critical", machPolicy(nil), "FFF", "wwc"},
		{"warning equal to critical skips warning", machPolicy(func(p *Policy) { p.WarningThreshold = 3 }), "FFF", "ppc"},
		{"one success leaves warning by default", machPolicy(nil), "FFP", "wwp"},
		{"warning exit threshold needs consecutive successes", machPolicy(func(p *Policy) { p.WarningExitThreshold = 2 }), "FPFPP", "wwwwp"},
		{"passing threshold 1 returns at once", machPolicy(nil), "FFFP", "wwcp"},
		{"passing threshold above 1 goes through recovery", machPolicy(func(p *Policy) { p.PassingThreshold = 3 }), "FFFPPP", "wwcrrp"},
		{"a failure in recovery returns to critical", machPolicy(func(p *Policy) { p.PassingThreshold = 3 }), "FFFPPFPPP", "wwcrrcrrp"},
		{"a success resets the failure count", machPolicy(nil), "FFPFF", "wwpww"},
		{"failure reset after K successes accumulates failures", machPolicy(func(p *Policy) { p.WarningThreshold = 3; p.FailureResetThreshold = 2 }), "FFPF", "pppc"},
		{"failure reset after K consecutive successes", machPolicy(func(p *Policy) { p.WarningThreshold = 3; p.FailureResetThreshold = 2 }), "FFPPFF", "pppppp"},
		{"fail-now goes straight to critical", machPolicy(nil), "N", "c"},
		{"fail-now from warning goes to critical", machPolicy(nil), "FN", "wc"},
		{"fail-now as failure counts once", machPolicy(func(p *Policy) { p.FailNowAsFailure = true }), "NNN", "wwc"},
		{"invalid status counts as failure", machPolicy(nil), "???", "wwc"},
		{"initial critical needs passing threshold", machPolicy(func(p *Policy) { p.InitialState = Critical; p.PassingThreshold = 2 }), "PP", "rp"},
		{"first pass immediate from critical", machPolicy(func(p *Policy) { p.InitialState = Critical; p.PassingThreshold = 2; p.FirstPassImmediate = true }), "P", "p"},
		{"first pass immediate only for the first result", machPolicy(func(p *Policy) { p.InitialState = Critical; p.PassingThreshold = 2; p.FirstPassImmediate = true }), "FPP", "crp"},
		{"entering passing from critical resets failures", machPolicy(func(p *Policy) { p.WarningThreshold = 2; p.CriticalThreshold = 2; p.FailureResetThreshold = 5 }), "FFPF", "pcpp"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, machRun(t, c.p, c.seq))
		})
	}
}

func TestMachineTransitions(t *testing.T) {
	m, err := NewMachine(DefaultPolicy())
	require.NoError(t, err)
	require.Equal(t, Passing, m.State())
	require.True(t, m.Served())

	at := machT0.Add(time.Minute)
	st := m.Observe(at, machResult('N'))
	require.True(t, st.Changed)
	assert.Equal(t, Transition{From: Passing, To: Critical, At: at, Cause: CauseProbe, Result: machResult('N')}, st.Transition)
	assert.False(t, m.Served())

	st = m.Observe(at.Add(time.Second), machResult('F'))
	assert.False(t, st.Changed, "critical stays critical")
	assert.Equal(t, Transition{}, st.Transition)

	// Time going backwards is harmless: it is only stamped.
	back := machT0.Add(-time.Hour)
	st = m.Observe(back, machResult('P'))
	require.True(t, st.Changed)
	assert.Equal(t, back, st.Transition.At)
	assert.Equal(t, Passing, st.Transition.To)
}

func TestMachineRecordServiceSchedule(t *testing.T) {
	p := DefaultPolicy() // interval 10s, max back-off 300s
	p.PassingThreshold = 2
	m, err := NewMachine(p)
	require.NoError(t, err)
	s := time.Second
	steps := []struct {
		in   byte
		want time.Duration
	}{
		{'P', 10 * s},  // passing: interval
		{'F', 5 * s},   // warning: half
		{'F', 5 * s},   // warning
		{'F', 10 * s},  // critical, 1st failure: interval
		{'F', 20 * s},  // doubling
		{'F', 40 * s},  //
		{'F', 80 * s},  //
		{'F', 160 * s}, //
		{'F', 300 * s}, // capped
		{'F', 300 * s}, //
		{'P', 5 * s},   // recovery: half, back-off gone
		{'F', 10 * s},  // critical again: back-off restarts at interval
		{'P', 5 * s},   // recovery
		{'P', 10 * s},  // passing
	}
	for i, c := range steps {
		st := m.Observe(machT0, machResult(c.in))
		assert.Equal(t, c.want, st.Next, "step %d (%c) in %v", i, c.in, m.State())
		assert.Equal(t, c.want, m.Next())
	}
}

func TestMachineScheduleFloor(t *testing.T) {
	p := DefaultPolicy()
	p.Interval = time.Millisecond
	p.Timeout = time.Millisecond
	p.MaxBackoff = time.Millisecond
	m, err := NewMachine(p)
	require.NoError(t, err)
	st := m.Observe(machT0, machResult('F'))
	assert.Equal(t, Warning, m.State())
	assert.Equal(t, MinInterval, st.Next, "half of 1ms is raised to the 1ms floor")
}

func TestMachineOverride(t *testing.T) {
	t.Run("drain then results move it by the normal rules", func(t *testing.T) {
		p := DefaultPolicy()
		p.PassingThreshold = 2
		m, err := NewMachine(p)
		require.NoError(t, err)
		st := m.Override(machT0, Critical)
		require.True(t, st.Changed)
		assert.Equal(t, Transition{From: Passing, To: Critical, At: machT0, Cause: CauseOverride}, st.Transition)
		assert.Equal(t, 10*time.Second, st.Next, "back-off restarts at the interval")
		assert.Equal(t, "rp", machFeed(m, "PP"))
	})
	t.Run("force passing then failures count from zero", func(t *testing.T) {
		m, err := NewMachine(Envoy())
		require.NoError(t, err)
		require.Equal(t, Critical, m.State())
		st := m.Override(machT0, Passing)
		require.True(t, st.Changed)
		assert.Equal(t, CauseOverride, st.Transition.Cause)
		assert.Equal(t, 3*time.Second, st.Next)
		assert.Equal(t, "wwc", machFeed(m, "FFF"))
	})
	t.Run("override ends the startup rule", func(t *testing.T) {
		p := Envoy()
		p.PassingThreshold = 2
		m, err := NewMachine(p)
		require.NoError(t, err)
		st := m.Override(machT0, Critical)
		assert.False(t, st.Changed, "already critical")
		assert.Equal(t, "rp", machFeed(m, "PP"))
	})
	t.Run("other target states are ignored", func(t *testing.T) {
		for _, s := range []State{Unknown, Warning, Recovery, State(42)} {
			m, err := NewMachine(DefaultPolicy())
			require.NoError(t, err)
			before := *m
			st := m.Override(machT0, s)
			assert.False(t, st.Changed)
			assert.Equal(t, before, *m)
		}
	})
}

func TestMachineDisabled(t *testing.T) {
	m, err := NewMachine(DefaultPolicy())
	require.NoError(t, err)
	st := m.SetDisabled(machT0, true)
	require.True(t, st.Changed)
	assert.Equal(t, Transition{From: Passing, To: Passing, At: machT0, Cause: CauseDisabled}, st.Transition)
	assert.True(t, m.Disabled())
	assert.False(t, m.Served())
	assert.False(t, m.SetDisabled(machT0, true).Changed, "setting it twice is no change")

	// Disabled is permanent: results and overrides do not clear it.
	machFeed(m, "FFFPPP")
	m.Override(machT0, Passing)
	assert.Equal(t, Passing, m.State())
	assert.False(t, m.Served())

	st = m.SetDisabled(machT0, false)
	require.True(t, st.Changed)
	assert.True(t, m.Served())
}

func TestNewMachineRejectsBadPolicy(t *testing.T) {
	p := DefaultPolicy()
	p.CriticalThreshold = -1
	m, err := NewMachine(p)
	require.Nil(t, m)
	require.ErrorIs(t, err, ErrInvalidPolicy)
	var pe *FieldError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "criticalThreshold", pe.Path)
}

func TestNewMachineCopiesPolicy(t *testing.T) {
	p := DefaultPolicy()
	m, err := NewMachine(p)
	require.NoError(t, err)
	p.CriticalThreshold = 99
	assert.Equal(t, 3, m.Policy().CriticalThreshold)
}

func TestMachineCountersSaturate(t *testing.T) {
	m, err := NewMachine(DefaultPolicy())
	require.NoError(t, err)
	m.fails, m.succ, m.critFails = machCap, machCap, machCap
	m.state = Critical
	m.Observe(machT0, machResult('F'))
	assert.Equal(t, machCap, m.fails)
	assert.Equal(t, 300*time.Second, m.Next())
}

func BenchmarkMachineObserve(b *testing.B) {
	p := DefaultPolicy()
	p.PassingThreshold = 2
	m, err := NewMachine(p)
	if err != nil {
		b.Fatal(err)
	}
	rs := []Result{machResult('P'), machResult('F'), machResult('F'), machResult('F'), machResult('F'), machResult('P'), machResult('P'), machResult('N')}
	now := machT0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		m.Observe(now, rs[i&7])
	}
}

func TestZeroMachineNeverPanics(t *testing.T) {
	var m Machine
	for _, c := range []byte("PFN?") {
		st := m.Observe(machT0, machResult(c))
		assert.False(t, st.Changed)
		assert.GreaterOrEqual(t, st.Next, MinInterval)
	}
	m.Override(machT0, Passing)
	assert.Equal(t, Unknown, m.State())
	m.SetDisabled(machT0, true)
	assert.False(t, m.Served())
}
