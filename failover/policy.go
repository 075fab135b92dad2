package failover

import "time"

// Policy decides what the DNS answers should be for an input of type In:
// a Snapshot for the CNAME topology (Topology), a Record for the record
// service's model (RecordPolicy), or whatever a user's own policy reads.
// now is the caller's clock, for policies whose decision may depend on
// time (a maintenance window, a ramp); the built-in policies do not read
// it. Decide must be pure — no I/O, no goroutines, the same output for the
// same inputs — and safe for concurrent use, and must not modify in. The
// Decision's Desired must follow the never-empty rule (no RRSet without
// records: leave a name out to keep its last published set, or Withdraw
// it); a policy sets the other fields of Decision when they mean something
// for it. An invalid input gives an error (the built-in policies' wrap
// ErrInvalidSnapshot).
//
// The test kit failover/failovertest runs any Policy[Snapshot] in its
// scenarios (Scenario.Policy), and the record package accepts a Desired
// as it is (see Desired.RRSets).
type Policy[In any] interface {
	Decide(now time.Time, in In) (Decision, error)
}

// PolicyFunc adapts a function to Policy.
type PolicyFunc[In any] func(now time.Time, in In) (Decision, error)

// Decide returns f(now, in).
func (f PolicyFunc[In]) Decide(now time.Time, in In) (Decision, error) { return f(now, in) }

var (
	_ Policy[Snapshot] = (*Topology)(nil)
	_ Policy[Record]   = (*RecordPolicy)(nil)
)
