package health

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSafeGateDeliversChangesInOrderOutsideTheLock(t *testing.T) {
	f := &flag{true}
	var got []bool
	var g *SafeGate
	g, err := NewSafeGate(GateObserverFunc(func(v Verdict) {
		got = append(got, v.Healthy)
		_ = g.Last() // calling back in must not deadlock
	}), GateCheck{Name: "a", Check: f})
	require.NoError(t, err)
	require.False(t, g.Last().Healthy)
	for i, ok := range []bool{true, true, false, false, true} {
		f.ok = ok
		g.Evaluate(t0.Add(time.Duration(i) * time.Second))
	}
	require.Equal(t, []bool{true, false, true}, got, "only changes, in order")
	require.True(t, g.Last().Healthy)
}

func TestSafeGateConcurrentUse(t *testing.T) {
	g, err := NewSafeGate(nil, GateCheck{Name: "a", Check: &flag{true}})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				g.Evaluate(t0)
				g.Last()
			}
		}()
	}
	wg.Wait()
	require.True(t, g.Last().Healthy)
}

func TestDetectorObserverOrder(t *testing.T) {
	var got []string
	cfg := DefaultOutlierConfig()
	cfg.MaxEjectionPercent = 100
	var d *Detector
	d, err := NewDetector(cfg, OutlierObserverFunc(func(e OutlierEvent) {
		got = append(got, e.Kind.String()+" "+e.Endpoint)
		_ = d.Ejected(e.Endpoint) // re-entrant calls are fine
	}))
	require.NoError(t, err)
	d.Add("a")
	d.Add("b")
	for i := 0; i < 5; i++ {
		d.Report(t0, "a", Response(500))
	}
	require.True(t, d.Ejected("a"))
	require.False(t, d.Healthy("a", true))
	require.True(t, d.ActiveCheckPassed(t0.Add(time.Second), "a"))
	for i := 0; i < 5; i++ {
		d.Report(t0.Add(2*time.Second), "b", LocalFailure())
	}
	require.Equal(t, 1, d.Tick(t0.Add(time.Minute)))
	require.Equal(t, []string{"ejected a", "returned a", "ejected b", "returned b"}, got)
	d.Remove("b")
}
