package failovertest

import (
	"testing"
	"testing/synctest"
	"time"
)

// Run runs the scenario inside a testing/synctest bubble, so minutes of
// virtual time take milliseconds: it builds the zones (one global zone,
// one private copy of the local zone per region), starts one controller
// per cluster, lets the deployment warm up (Config.WarmUp), then plays the
// timeline — each step at its instant, after everything else due then has
// run — and stops every controller at the end, waiting for all their
// goroutines. Failed expectations are reported with t.Errorf; a scenario
// with declaration errors fails with t.Fatal before anything starts.
//
// Run calls synctest.Test, so t must not be inside a bubble already, and
// the test must not run its subtests in parallel with it on the same
// Scenario. A Scenario runs once.
func (s *Scenario) Run(t *testing.T) {
	t.Helper()
	if s.err != nil {
		t.Fatal(s.err)
	}
	if s.topo == nil {
		t.Fatal(ErrNotConfigured)
	}
	if s.ran {
		t.Fatalf("%v: a scenario runs once", ErrInvalid)
	}
	s.ran = true
	if len(s.clusters) == 0 {
		t.Fatalf("%v: no cluster declared", ErrInvalid)
	}
	synctest.Test(t, func(t *testing.T) {
		t.Helper()
		s.run(t)
	})
}

func (s *Scenario) run(t *testing.T) {
	t.Helper()
	w, err := newWorld(s, time.Now().Add(s.cfg.warmUp()))
	if err != nil {
		t.Fatalf("failovertest: building zones: %v", err)
	}
	defer func() {
		for _, c := range s.clusters {
			w.stopController(t, c.name)
		}
	}()
	for _, c := range s.clusters {
		w.startController(t, c.name)
	}
	if t.Failed() {
		t.FailNow()
	}
	steps := s.sorted()
	end := s.until
	if n := len(steps); n > 0 {
		end = max(end, steps[n-1].at)
	}
	for _, st := range steps {
		sleepUntil(w, st.at)
		st.do(t, w)
		w.checkInvariants()
	}
	sleepUntil(w, end)
	w.checkInvariants()
	for _, c := range s.clusters {
		w.stopController(t, c.name)
	}
	w.reportInvariants(t)
}

// sleepUntil advances virtual time to d after time zero and waits until
// everything due by then has run.
func sleepUntil(w *World, d time.Duration) {
	if wait := d - w.now(); wait > 0 {
		time.Sleep(wait)
	}
	synctest.Wait()
}

// startController starts a fresh controller for cluster; it is an error
// to start one that runs.
func (w *World) startController(t *testing.T, cluster string) {
	t.Helper()
	w.mu.Lock()
	running := w.ctrls[cluster] != nil
	w.mu.Unlock()
	if running {
		t.Errorf("at %v: controller %s is already up", w.now(), cluster)
		return
	}
	c, err := newController(t, w, cluster)
	if err != nil {
		t.Errorf("at %v: starting controller %s: %v", w.now(), cluster, err)
		return
	}
	w.mu.Lock()
	w.ctrls[cluster] = c
	w.mu.Unlock()
	c.start()
}

// stopController stops cluster's controller if it runs.
func (w *World) stopController(t *testing.T, cluster string) {
	t.Helper()
	w.mu.Lock()
	c := w.ctrls[cluster]
	delete(w.ctrls, cluster)
	w.mu.Unlock()
	if c != nil {
		c.stop()
	}
}
