package health

import (
	"sync"
	"time"
)

// GateObserver receives the verdicts of a SafeGate that changed.
type GateObserver interface {
	Observe(Verdict)
}

// GateObserverFunc adapts a function to GateObserver.
type GateObserverFunc func(Verdict)

// Observe calls f(v).
func (f GateObserverFunc) Observe(v Verdict) { f(v) }

// SafeGate makes a Gate safe for concurrent use and hands every verdict
// that changed (healthy ↔ unhealthy, and the first) to an observer, in
// order, outside its lock. The last verdict can be read at any time.
type SafeGate struct {
	mu         sync.Mutex
	gate       *Gate
	last       Verdict
	obs        GateObserver
	queue      []Verdict
	delivering bool
}

// NewSafeGate returns a concurrency-safe gate over checks; obs may be nil.
func NewSafeGate(obs GateObserver, checks ...GateCheck) (*SafeGate, error) {
	g, err := NewGate(checks...)
	if err != nil {
		return nil, err
	}
	return &SafeGate{gate: g, obs: obs}, nil
}

// Evaluate evaluates the gate at now (see Gate.Evaluate) and returns the
// verdict; a changed verdict also goes to the observer.
func (s *SafeGate) Evaluate(now time.Time) Verdict {
	s.mu.Lock()
	if s.gate == nil {
		s.gate = &Gate{} // a zero SafeGate gates nothing
	}
	v := s.gate.Evaluate(now)
	s.last = v
	if v.Changed && s.obs != nil {
		s.queue = append(s.queue, v)
	}
	if s.delivering || len(s.queue) == 0 {
		s.mu.Unlock()
		return v
	}
	s.delivering = true
	for len(s.queue) > 0 {
		batch := s.queue
		s.queue = nil
		s.mu.Unlock()
		for _, q := range batch {
			s.obs.Observe(q)
		}
		s.mu.Lock()
	}
	s.delivering = false
	s.mu.Unlock()
	return v
}

// Last returns the most recent verdict (the zero Verdict, unhealthy, before
// the first evaluation).
func (s *SafeGate) Last() Verdict {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}
