package record

import (
	"time"

	"github.com/gslbkit/gslb/internal/errclass"
)

// Observer receives the reconciler's events. Observe is called from the
// goroutine that reconciled (Run's, or the caller of Apply/ReconcileOnce),
// outside any lock, with the events of one reconcile in the order they
// happened, once that reconcile is over (so an observer may call back into
// the reconciler). Events of reconciles run concurrently by different
// goroutines may interleave. It should return quickly. A nil Observer means
// nobody listens.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }

// Event is one of PlanEvent, WriteEvent, HeldStale, RefusedEvent,
// SwitchWindow, ErrorEvent, RetryEvent, ReadBackEvent, FencedEvent and
// AppliedEvent.
// Use a type switch.
type Event interface {
	// When returns the time the event happened.
	When() time.Time
}

// PlanEvent reports the plan of a reconcile, before anything is written
// (also when it is empty, and in dry-run mode, where nothing is written).
// A reconcile that could read none of its zones makes no plan and
// reports none: an empty plan always means the zones read match.
type PlanEvent struct {
	// At is when the plan was made.
	At time.Time
	// Changes is the plan.
	Changes Changes
	// DryRun is true when the plan is only printed.
	DryRun bool
	// Unread are the zones that could not be read (ErrorEvent): the plan
	// does not cover them.
	Unread []string
}

// When returns At.
func (e PlanEvent) When() time.Time { return e.At }

// WriteEvent reports one provider write call and its outcome.
type WriteEvent struct {
	// At is when the call returned.
	At time.Time
	// Zone is the zone written.
	Zone string
	// Kind is the call made.
	Kind StepKind
	// Records is the number of records set plus deleted.
	Records int
	// Err is nil on success, else a *WriteError.
	Err error
}

// When returns At.
func (e WriteEvent) When() time.Time { return e.At }

// HeldStale reports a published RRset kept because its desired set is
// empty: the never-empty rule at work. It is reported on every reconcile
// while the set is held; Since stays the time it was first held.
type HeldStale struct {
	// At is the reconcile that held the set.
	At time.Time
	// Key is the RRset held.
	Key Key
	// Since is when the set was first held (its desired set became empty).
	Since time.Time
	// Published is what stays published.
	Published RRSet
}

// When returns At.
func (e HeldStale) When() time.Time { return e.At }

// Err returns the condition as an error that matches ErrEmptySet.
func (e HeldStale) Err() error { return &EmptySetError{Key: e.Key, Published: true} }

// RefusedEvent reports a desired change the plan refused (not owned, type
// switch, or an empty set with nothing published). It repeats on every
// reconcile while the desired state asks for it.
type RefusedEvent struct {
	// At is the reconcile that refused.
	At time.Time
	// Refusal is what was refused and why.
	Refusal
}

// When returns At.
func (e RefusedEvent) When() time.Time { return e.At }

// SwitchWindow reports a type switch made in two provider calls (the
// provider is not a Replacer): between Start and End the name had neither
// type. Closed is false when the second call failed; the window stays open
// until a retry succeeds.
type SwitchWindow struct {
	// Zone is the zone of the switch.
	Zone string
	// Keys are the RRsets deleted and created by the switch.
	Keys []Key
	// Start is when the old type was gone.
	Start time.Time
	// End is when the call setting the new type returned.
	End time.Time
	// Closed is true when the new type was set.
	Closed bool
}

// When returns End.
func (e SwitchWindow) When() time.Time { return e.End }

// ErrorEvent reports a failed read or write. Its methods say whether it
// will be retried (throttled, transient) or surfaces (permanent); the
// error is judged by behaviour (Throttled() / Temporary() in its chain).
type ErrorEvent struct {
	// At is when the error was met.
	At time.Time
	// Err is a *ReadError, a *WriteError or a limiter wait error.
	Err error

	class errclass.Class
}

// When returns At.
func (e ErrorEvent) When() time.Time { return e.At }

// Throttled reports whether the provider asked to slow down.
func (e ErrorEvent) Throttled() bool { return e.class == errclass.Throttled }

// Retryable reports whether Run will retry after a back-off (throttled or
// transient errors); the others surface and wait for the next Set or
// resync.
func (e ErrorEvent) Retryable() bool { return e.class.Retryable() }

// Class returns "throttled", "transient" or "permanent".
func (e ErrorEvent) Class() string { return e.class.String() }

// RetryEvent reports that Run will reconcile again after Delay because the
// last attempt failed with a throttled or transient error.
type RetryEvent struct {
	// At is when the retry was scheduled.
	At time.Time
	// Attempt counts consecutive failed reconciles, from 1.
	Attempt int
	// Delay is the wait before the retry.
	Delay time.Duration
	// Err is the failure retried (joined when several).
	Err error
}

// When returns At.
func (e RetryEvent) When() time.Time { return e.At }

// AppliedEvent reports a reconcile that left nothing pending: the zones
// match the latest desired state (except refused and held sets). Writes is
// the number of provider write calls it took, 0 in a steady state.
type AppliedEvent struct {
	// At is when the reconcile ended.
	At time.Time
	// Writes is the number of provider write calls made.
	Writes int
}

// When returns At.
func (e AppliedEvent) When() time.Time { return e.At }
