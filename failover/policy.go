package failover

import "time"

// Decider is a failover policy: it decides what the DNS answers should be
// for an input of type In:
// a Snapshot for the CNAME topology (Topology), a Record for the record
// service's model (RecordPolicy), or whatever a user's own policy reads.
// now is the caller's clock, for policies whose decision may depend on
// time (a maintenance window, a ramp); the built-in policies do not read
// it. Decide must be pure — no I/O, no goroutines, the same output for the
// same inputs — and safe for concurrent use, and must not modify in. The
// Decision's Desired must follow the never-empty rule (no DesiredSet without
// records: leave a name out to keep its last published set, or Withdraw
// it); a policy sets the other fields of Decision when they mean something
// for it. An invalid input gives an error (the built-in policies' wrap
// ErrInvalidSnapshot).
//
// The test kit failover/failovertest runs any Decider[Snapshot] in its
// scenarios (failovertest.Scenario.Policy), and the record package accepts a DesiredState
// as it is (see DesiredState.Records and DesiredState.Withdrawals).
//
// A Decider is not a probe.Policy: that one is a per-target threshold and
// schedule configuration; a Decider turns the health those targets reach
// into answers.
type Decider[In any] interface {
	Decide(now time.Time, in In) (Decision, error)
}

// DeciderFunc adapts a function to Decider.
type DeciderFunc[In any] func(now time.Time, in In) (Decision, error)

// Decide returns f(now, in).
func (f DeciderFunc[In]) Decide(now time.Time, in In) (Decision, error) { return f(now, in) }

var (
	_ Decider[Snapshot] = (*Topology)(nil)
	_ Decider[Record]   = (*RecordPolicy)(nil)
)
