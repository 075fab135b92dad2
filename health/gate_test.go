package health

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

type flag struct{ ok bool }

func (f *flag) Check(time.Time) Signal {
	if f.ok {
		return Pass()
	}
	return Fail("down")
}

func TestGateFailsAtOnceWithoutGrace(t *testing.T) {
	a, b := &flag{true}, &flag{true}
	g, err := NewGate(GateCheck{Name: "a", Check: a}, GateCheck{Name: "b", Check: b, RecoveryThreshold: 3})
	require.NoError(t, err)
	v := g.Evaluate(t0)
	require.True(t, v.Healthy)
	require.True(t, v.Changed)
	a.ok = false
	v = g.Evaluate(t0.Add(time.Second))
	require.False(t, v.Healthy, "one failing check is enough, at once")
	require.Equal(t, []Failure{{Check: "a", Reason: "down"}}, v.Failing)
	a.ok = true
	v = g.Evaluate(t0.Add(2 * time.Second))
	require.True(t, v.Healthy, "recovery threshold 0 counts again at once")
}

func TestGateProxySyncNeedsThreeConsecutivePasses(t *testing.T) {
	p := &flag{true}
	g, err := NewGate(GateCheck{Name: "proxySync", Check: p, RecoveryThreshold: 3})
	require.NoError(t, err)
	require.True(t, g.Evaluate(t0).Healthy, "the first pass applies at once")
	seq := []struct {
		ok, healthy bool
	}{{false, false}, {true, false}, {true, false}, {false, false}, {true, false}, {true, false}, {true, true}, {true, true}}
	for i, s := range seq {
		p.ok = s.ok
		v := g.Evaluate(t0.Add(time.Duration(i+1) * 10 * time.Second))
		require.Equal(t, s.healthy, v.Healthy, "evaluation %d", i+1)
		if !v.Healthy && s.ok {
			require.True(t, v.Failing[0].Recovering)
		}
	}
}

func TestGateDisabledChecksAndValidation(t *testing.T) {
	g, err := NewGate(GateCheck{Name: "off", Check: &flag{false}, Disabled: true})
	require.NoError(t, err)
	require.True(t, g.Evaluate(t0).Healthy)
	require.Empty(t, g.Checks())
	for _, bad := range [][]GateCheck{
		{{Name: "", Check: &flag{}}},
		{{Name: "a", Check: &flag{}}, {Name: "a", Check: &flag{}}},
		{{Name: "a"}},
		{{Name: "a", Check: &flag{}, RecoveryThreshold: -1}},
	} {
		_, err := NewGate(bad...)
		require.ErrorIs(t, err, ErrInvalidConfig)
	}
}

// Property: the gate is never healthy while any enabled check fails.
func TestGatePropertyNeverHealthyWhileACheckFails(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(t, "checks")
		flags := make([]*flag, n)
		var checks []GateCheck
		for i := range flags {
			flags[i] = &flag{true}
			checks = append(checks, GateCheck{Name: string(rune('a' + i)), Check: flags[i],
				RecoveryThreshold: rapid.IntRange(0, 4).Draw(t, "rt"), Disabled: rapid.Bool().Draw(t, "off")})
		}
		g, err := NewGate(checks...)
		if err != nil {
			t.Fatal(err)
		}
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for s := 0; s < steps; s++ {
			anyFail := false
			for i, f := range flags {
				f.ok = rapid.Bool().Draw(t, "ok")
				if !f.ok && !checks[i].Disabled {
					anyFail = true
				}
			}
			v := g.Evaluate(t0.Add(time.Duration(s) * time.Second))
			if anyFail && v.Healthy {
				t.Fatalf("step %d: healthy while a check fails", s)
			}
		}
	})
}

func BenchmarkGateEvaluate5(b *testing.B) {
	var checks []GateCheck
	for i := 0; i < 5; i++ {
		checks = append(checks, GateCheck{Name: string(rune('a' + i)), Check: &flag{true}, RecoveryThreshold: 3})
	}
	g, _ := NewGate(checks...)
	b.ReportAllocs()
	now := t0
	for b.Loop() {
		now = now.Add(time.Second)
		g.Evaluate(now)
	}
}
