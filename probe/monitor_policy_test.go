package probe

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMonitorSharesPolicies checks that targets with equal policies share
// one copy, that Update and Remove release it, and that a machine's policy
// stays the target's own value.
func TestMonitorSharesPolicies(t *testing.T) {
	pass := ProberFunc(func(context.Context) Result { return Result{Status: Pass} })
	pol := func(interval time.Duration) Policy {
		p := DefaultPolicy()
		p.Interval = interval
		return p
	}
	m := monNew(t, nil, nil)
	for i := range 30 {
		require.NoError(t, m.Add(Target{ID: fmt.Sprint("t", i), Prober: pass, Policy: pol(time.Duration(1+i%3) * time.Second)}))
	}
	policies := func() int {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.policies)
	}
	assert.Equal(t, 3, policies())
	m.mu.Lock()
	assert.Same(t, m.targets["t0"].mach.p, m.targets["t3"].mach.p, "equal policies are shared")
	assert.NotSame(t, m.targets["t0"].mach.p, m.targets["t1"].mach.p)
	m.mu.Unlock()

	// Moving every 1 s target to a new policy releases the 1 s copy.
	for i := 0; i < 30; i += 3 {
		require.NoError(t, m.Update(Target{ID: fmt.Sprint("t", i), Prober: pass, Policy: pol(5 * time.Second)}))
	}
	assert.Equal(t, 3, policies(), "1 s released, 5 s added")
	st, ok := m.Stats("t0")
	require.True(t, ok)
	assert.Equal(t, Passing, st.State)
	m.mu.Lock()
	assert.Equal(t, pol(5*time.Second), m.targets["t0"].mach.Policy())
	m.mu.Unlock()

	// An update with the same policy keeps the shared copy and the count.
	require.NoError(t, m.Update(Target{ID: "t1", Prober: pass, Policy: pol(2 * time.Second)}))
	assert.Equal(t, 3, policies())

	for i := range 30 {
		require.NoError(t, m.Remove(fmt.Sprint("t", i)))
	}
	assert.Equal(t, 0, policies(), "removing every target releases every policy")
}
