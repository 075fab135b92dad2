package probe

import (
	"bytes"
	"runtime"
)

// Event reports one change of a target's state seen by a Monitor.
type Event struct {
	// Seq numbers the Monitor's events from 1 in delivery order, with no
	// gaps; an observer can use it to check it missed nothing.
	Seq uint64 `json:"seq"`
	// Target is the ID of the target that changed.
	Target string `json:"target"`
	// Transition is the change, as the target's machine reported it (At is
	// the Monitor's clock when the probe result or the operator's call
	// reached the machine).
	Transition Transition `json:"transition"`
	// Served and Disabled are the target's state after the change.
	Served   bool `json:"served"`
	Disabled bool `json:"disabled"`
}

// Observer receives a Monitor's events.
//
// The Monitor calls Observe from one goroutine, one event at a time, in the
// order the changes happened (per target and across targets), never while
// holding its lock: an observer may call any Monitor method, including
// Override and Remove. Events queue while the observer is busy (without
// bound), so a slow observer delays delivery but never probing; once Run's
// context is done, at most MonitorDrainEvents more are delivered and the
// rest dropped (Monitor.DroppedEvents). A nil Observer means nobody listens
// and no events are kept.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to the Observer interface.
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }

// monGoroutine returns the ID of the calling goroutine, read from its
// stack header ("goroutine 42 [running]:"). Remove uses it to tell a call
// from inside the observer (the deliverer's goroutine) from any other; it
// runs only when the target being removed has an event in the observer's
// hands.
func monGoroutine() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
